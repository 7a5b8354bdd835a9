/**
 * The OAuth consent page in a real browser against the real local server the browser tests
 * share (server.setup.ts): an MCP host on
 * this machine (a loopback callback of the test's own) sends the person to
 * /oauth/authorize; they sign in with a key, tick the scopes and allow, and the browser
 * lands on the host's callback with a code (the page's cookie kept, its form's redirect let
 * through by its Content-Security-Policy); the code gets a token that lists the prompts on
 * /mcp. A wrong key shows the page again with what to fix; Deny sends access_denied. The
 * page's screenshot is written beside the console's (.wrangler/browser-shots/).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext } from 'playwright-core';
import { apiCaller, launchBrowser } from './browser-support.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = process.env.RUNVIL_SHOTS ? join(root, process.env.RUNVIL_SHOTS) : join(root, '.wrangler/browser-shots');
const { base, token: TOKEN } = inject('browserServer');

const HELLO = `---
name: consent-hello
description: Says hello.
runvil: 0
---
# Hello

\`\`\`lua
return 'hello'
\`\`\`
`;

let callback: Server;
let callbackUrl: string;
let browser: Browser;
let context: BrowserContext;
let key: string;
let clientId: string;

const base64url = (bytes: Buffer) => bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

const api = apiCaller(() => base, TOKEN);

/** A new authorization request's URL and the verifier its challenge was made from. */
function authorization(state: string): { url: string; verifier: string } {
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callbackUrl,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    resource: `${base}/mcp`,
  });
  return { url: `${base}/oauth/authorize?${query}`, verifier };
}

beforeAll(async () => {
  await api('PUT', '/prompts/consent-hello', HELLO, 'text/markdown');
  key = (await api('POST', '/keys', { name: 'laptop', scopes: ['runs:read', 'runs:start:*'] })).key;
  // The MCP host's callback: it says it got the answer (the test reads the browser's URL).
  callback = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('back at the host'));
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  const registered = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Desk Agent',
      redirect_uris: [callbackUrl],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  });
  clientId = ((await registered.json()) as { client_id: string }).client_id;
  ({ browser, context } = await launchBrowser());
  mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => callback?.close(resolve));
});

describe('the consent page in a browser', () => {
  it('signs in with a key, grants the ticked scopes, and sends the browser back to the host with a code that gets a token for /mcp', async () => {
    const page = await context.newPage();
    const problems: string[] = [];
    // The browser asks for a favicon, which the deployment has none of; anything else is a problem (a CSP refusal, a script).
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) problems.push(`${message.text()} ${message.location().url}`);
    });
    const { url, verifier } = authorization('s-allow');
    await page.goto(url);
    expect(await page.locator('h2').innerText()).toBe('Allow Desk Agent to use this deployment?');
    expect(await page.locator('text=an app on your computer').count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'oauth-consent.png'), fullPage: true });
    await page.fill('input[name=key]', key);
    await page.uncheck('input[value="asks:answer:*"]');
    await Promise.all([page.waitForURL((target) => target.href.startsWith(callbackUrl)), page.click('button[value=approve]')]);
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('s-allow');
    const code = back.searchParams.get('code')!;
    expect(code).toMatch(/\S/);
    expect(problems, problems.join('\n')).toEqual([]);

    const exchanged = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: callbackUrl }).toString(),
    });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as { access_token: string; scope: string };
    expect(tokens.scope).toBe('runs:read runs:start:*');
    const client = new Client({ name: 'desk-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } } }),
    );
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((tool) => tool.name)).toContain('consent-hello');
    await page.close();
  });

  it('shows the page again, saying what to fix, for a wrong key and for a scope the key lacks; then grants', async () => {
    const page = await context.newPage();
    await page.goto(authorization('s-fix').url);
    await page.fill('input[name=key]', 'rvk_' + 'A'.repeat(43));
    await page.click('button[value=approve]');
    await page.waitForSelector('#consent-problem');
    expect(await page.locator('#consent-problem').innerText()).toContain('not one of this deployment');
    // The right key, with the scopes ticked as they were: asks:answer:*, which this key lacks.
    await page.fill('input[name=key]', key);
    await page.click('button[value=approve]');
    await page.waitForSelector('#consent-problem >> text=does not have asks:answer:*');
    await page.fill('input[name=key]', key);
    await page.uncheck('input[value="asks:answer:*"]');
    await Promise.all([page.waitForURL((target) => target.href.startsWith(callbackUrl)), page.click('button[value=approve]')]);
    expect(new URL(page.url()).searchParams.get('code')).toMatch(/\S/);
    await page.close();
  });

  it('sends access_denied back to the host on Deny, with no key typed', async () => {
    const page = await context.newPage();
    await page.goto(authorization('s-deny').url);
    await Promise.all([page.waitForURL((target) => target.href.startsWith(callbackUrl)), page.click('button[value=deny]')]);
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('s-deny');
    expect(back.searchParams.get('code')).toBeNull();
    await page.close();
  });
});
