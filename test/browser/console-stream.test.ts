/**
 * The console's run page shows a model step's text as it arrives, in a real browser (Debian's
 * chromium, playwright-core) against the real local server, whose model is an
 * OpenAI-compatible server on loopback that streams (scripts/stream-servers.mjs) and holds its
 * reply half way until the test has looked. The text is shown as text: markup in it never runs.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchBrowser } from './browser-support.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killLocalServer, startLocalServer, type LocalServer } from '../../scripts/local-server.mjs';
import { startStreamServer, type StreamServer } from '../../scripts/stream-servers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = randomBytes(16).toString('hex');
const stateDir = join(root, `.wrangler/browser-stream-state-${process.pid}`);

const PIECES = ['Tides ', 'rise <img src=x onerror="window.__pwned = 1">', ' and ', 'fall.'];

const PROMPT = `---
name: console-stream
description: One streamed model step.
runvil: 0
models:
  writer: { provider: openai, model: loopback }
---
# Console stream

## Write
\`\`\`lua
return models.get('writer'):infer('Write about tides')
\`\`\`
`;

let model: StreamServer;
let server: LocalServer;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  model = await startStreamServer('openai', { pieces: () => PIECES });
  server = await startLocalServer({ port: await freePort(), token: TOKEN, stateDir, env: { OPENAI_API_KEY: 'loopback-key', OPENAI_BASE_URL: model.url } });
  const put = await fetch(`${server.base}/prompts/console-stream`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}` }, body: PROMPT });
  if (!put.ok) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  ({ browser, context } = await launchBrowser());
}, 180_000);

afterAll(async () => {
  model?.release();
  await browser?.close();
  await killLocalServer(server);
  await model?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  await page.addInitScript((token) => (globalThis as any).sessionStorage.setItem('runvil.apiToken', token), TOKEN);
  await page.goto(`${server.base}${path}`);
  await page.waitForSelector('body[data-ready]');
  return page;
}

describe("the console's run page", () => {
  it("shows a model step's text as it arrives, then the reply", async () => {
    model.holdAfter = 2;
    const started = await fetch(`${server.base}/prompts/console-stream/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{}' });
    const { run_id: runId } = (await started.json()) as { run_id: string };
    await model.nextRequest(1);
    const page = await open(`/console/runs/${runId}`);
    const arriving = page.locator('.message.reply .streaming');
    await expect.poll(() => arriving.textContent(), { timeout: 30_000 }).toBe(PIECES.slice(0, 2).join(''));
    expect(await page.locator('#run-status').textContent()).toBe('running');
    model.holdAfter = null;
    model.release();
    await page.waitForSelector('#run-status[data-status="completed"]', { timeout: 30_000 });
    // The reply replaces the text as it came; the markup in it is text.
    await expect.poll(() => page.locator('.message.reply').last().textContent()).toContain(PIECES.join(''));
    expect(await page.locator('.message.reply .streaming').count()).toBe(0);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
  });
});
