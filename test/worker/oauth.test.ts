/**
 * OAuth 2.1 for /mcp (DESIGN.md Part 3, "Prompts as MCP tools", Auth), as an MCP host goes
 * through it by hand: the metadata of the resource and of the authorization server,
 * dynamic registration, the console's consent page signed in with a key, PKCE, the code's
 * exchange, /mcp with the token (its grant's client and scopes), refresh; and Runvil keys
 * on /mcp beside it. The attacker's side is oauth-attacks.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, json, testEnv } from './app/client.ts';
import {
  authorize,
  authorizePath,
  callMcp,
  codeOf,
  exchange,
  openConsent,
  ORIGIN,
  pkce,
  postConsent,
  register,
  REDIRECT_URI,
  send,
  tokenRequest,
  worker,
  type Client,
  type Tokens,
} from './app/oauth-client.ts';
import { API_TOKEN } from './app/client.ts';

interface MadeKey {
  id: string;
  key: string;
}
const makeKey = async (name: string, scopes: string[]): Promise<MadeKey> => json<MadeKey>(await call('POST', '/keys', { body: { name, scopes } }), 201);

let caller: MadeKey;
beforeAll(async () => {
  caller = await makeKey('oauth-signer', ['runs:read', 'runs:start:*', 'asks:answer:*']);
});

describe('discovery', () => {
  it("serves /mcp's protected-resource metadata (RFC 9728) naming the deployment as its authorization server", async () => {
    const response = await send('/.well-known/oauth-protected-resource/mcp');
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.resource).toBe(`${ORIGIN}/mcp`);
    expect(metadata.authorization_servers).toEqual([ORIGIN]);
    expect(metadata.bearer_methods_supported).toEqual(['header']);
  });

  it('serves the authorization server metadata (RFC 8414): endpoints, S256 only, registration, the scopes', async () => {
    const response = await send('/.well-known/oauth-authorization-server');
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(ORIGIN);
    expect(metadata.authorization_endpoint).toBe(`${ORIGIN}/oauth/authorize`);
    expect(metadata.token_endpoint).toBe(`${ORIGIN}/oauth/token`);
    expect(metadata.registration_endpoint).toBe(`${ORIGIN}/oauth/register`);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    expect(metadata.scopes_supported).toEqual(['runs:read', 'runs:start:*', 'asks:answer:*', 'prompts:write', 'admin']);
  });

  it('answers /mcp without credentials with 401 and the challenge naming the metadata', async () => {
    const response = await send('/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`);
  });
});

describe('the public origin', () => {
  it('is taken as a URL spells it: a host in capitals, a default port', async () => {
    const env = { ...testEnv, RUNVIL_ORIGIN: 'https://Runvil.TEST:443' };
    const response = await worker.fetch(new Request(`${ORIGIN}/.well-known/oauth-authorization-server`), env);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { issuer: string }).issuer).toBe(ORIGIN);
  });

  it('is needed: without one there is no OAuth (its routes are 404), and keys still work on /mcp', async () => {
    const env = { ...testEnv, RUNVIL_ORIGIN: '' };
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp', '/oauth/register', '/oauth/token']) {
      const response = await worker.fetch(new Request(`${ORIGIN}${path}`, { method: path.startsWith('/oauth') ? 'POST' : 'GET' }), env);
      expect(response.status, path).toBe(404);
    }
    const mcp = await worker.fetch(new Request(`${ORIGIN}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${API_TOKEN}` }, body: '{}' }), env);
    expect(await mcp.json()).toEqual({ principal: { kind: 'root' } });
  });
});

describe('the whole flow', () => {
  let client: Client;
  let tokens: Tokens;

  it('registers a client, shows the consent page, and grants the ticked scopes for a key', async () => {
    client = await register();
    expect(client.client_id).toMatch(/\S/);
    const { verifier, challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge, { scope: 'runs:start:* asks:answer:*' }));
    expect(consent.status).toBe(200);
    expect(consent.html).toContain('Test MCP host');
    expect(consent.html).toContain('127.0.0.1');
    expect(consent.html).toContain('an app on your computer');
    expect(consent.cookie).toMatch(/^__Host-oauth-consent/);
    const decided = await postConsent(consent, { key: caller.key, scope: ['runs:start:*', 'asks:answer:*'] });
    expect(decided.status).toBe(302);
    const location = new URL(decided.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('state')).toBe('state-1');
    expect(location.searchParams.get('iss')).toBe(ORIGIN);
    const response = await exchange(client, codeOf(decided)!, verifier);
    expect(response.status).toBe(200);
    tokens = (await response.json()) as Tokens;
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('runs:start:* asks:answer:*');
    expect(tokens.refresh_token).toMatch(/\S/);
    const mcp = await callMcp(tokens.access_token);
    expect(mcp.status).toBe(200);
    expect(await mcp.json()).toEqual({ principal: { kind: 'oauth', clientId: client.client_id, scopes: ['runs:start:*', 'asks:answer:*'] } });
  });

  it('refreshes: the new access token carries the same grant, and the old refresh token is spent once the new one is used', async () => {
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as Tokens;
    expect(next.access_token).not.toBe(tokens.access_token);
    expect(((await (await callMcp(next.access_token)).json()) as any).principal.scopes).toEqual(['runs:start:*', 'asks:answer:*']);
    const again = await tokenRequest({ grant_type: 'refresh_token', refresh_token: next.refresh_token!, client_id: client.client_id });
    expect(again.status).toBe(200);
    const stale = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id });
    expect(stale.status).toBe(400);
    expect(((await stale.json()) as any).error).toBe('invalid_grant');
  });

  it('revokes a token at the token endpoint (RFC 7009): /mcp refuses it from then on', async () => {
    const granted = await authorize(client, caller.key, ['runs:read']);
    expect((await callMcp(granted.access_token)).status).toBe(200);
    const revoked = await tokenRequest({ token: granted.access_token, token_type_hint: 'access_token', client_id: client.client_id });
    expect(revoked.status).toBe(200);
    expect((await callMcp(granted.access_token)).status).toBe(401);
  });

  it('grants a narrower set than the key has, and a prompt of its own typed in', async () => {
    const client = await register();
    const granted = await authorize(client, caller.key, ['runs:start:greet']);
    expect(granted.scope).toBe('runs:start:greet');
    const { challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge, { scope: '' }));
    const decided = await postConsent(consent, { key: caller.key, scope: [], more: 'runs:start:greet asks:answer:greet' });
    expect(decided.status).toBe(302);
  });

  it('lets the root grant any scope', async () => {
    const tokens = await authorize(await register(), API_TOKEN, ['admin', 'prompts:write']);
    expect(((await (await callMcp(tokens.access_token)).json()) as any).principal.scopes).toEqual(['admin', 'prompts:write']);
  });

  it("declines: the client gets access_denied at its redirect URI with its state, and the page's handle is spent", async () => {
    const client = await register();
    const { challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge));
    const denied = await postConsent(consent, { decision: 'deny' });
    expect(denied.status).toBe(302);
    const location = new URL(denied.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('state-1');
    expect(location.searchParams.get('code')).toBeNull();
    const after = await postConsent(consent, { key: caller.key, scope: ['runs:read'] });
    expect(after.status).toBe(400);
    expect(codeOf(after)).toBeNull();
  });

  it('ticks what the client asked for, else what an MCP host needs, and lists what is not a scope of Runvil as not granted', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const asked = await openConsent(authorizePath(client, challenge, { scope: 'runs:read mcp:tools' }));
    expect(asked.html).toMatch(/value="runs:read" checked/);
    expect(asked.html).not.toMatch(/value="runs:start:\*" checked/);
    expect(asked.html).toContain('mcp:tools: not scopes of Runvil');
    const offline = await openConsent(authorizePath(client, challenge, { scope: 'runs:read offline_access' }));
    expect(offline.html).not.toContain('offline_access');
    const none = await openConsent(authorizePath(client, challenge, { scope: '' }));
    expect(none.html).toMatch(/value="runs:start:\*" checked/);
    expect(none.html).toMatch(/value="asks:answer:\*" checked/);
  });

  it('serves the page with the console stylesheet, no script, no framing, and a form that may go only here and to the client', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const response = await send(authorizePath(client, challenge));
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' http://127.0.0.1:33418");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const html = await response.text();
    expect(html).toContain('/console/console.css');
    expect(html).not.toContain('<script');
  });

  it('escapes what the client wrote about itself', async () => {
    const client = await register([REDIRECT_URI], { client_name: '<img src=x onerror=alert(1)>"Evil"' });
    const { challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge));
    expect(consent.html).not.toContain('<img src=x');
    expect(consent.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});

describe('Runvil keys on /mcp', () => {
  it('reach the handler as the root and as keys, the provider never seeing them', async () => {
    expect(await (await callMcp(API_TOKEN)).json()).toEqual({ principal: { kind: 'root' } });
    const principal = ((await (await callMcp(caller.key)).json()) as any).principal;
    expect(principal).toMatchObject({ kind: 'key', id: caller.id, scopes: ['runs:read', 'runs:start:*', 'asks:answer:*'] });
  });

  it("refuse a wrong key with the app's 401, with the OAuth challenge added", async () => {
    const response = await callMcp('rvk_' + 'x'.repeat(43));
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).error).toMatch(/unknown key/);
    expect(response.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('leave every other route as it was: the REST API with a key, without one, and its refusals', async () => {
    expect((await send('/health')).status).toBe(200);
    const runs = await send('/runs', { headers: { authorization: `Bearer ${caller.key}` } });
    expect(runs.status).toBe(200);
    const refused = await send('/prompts');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBeNull();
    expect(await refused.json()).toEqual({ error: { message: 'missing credentials: send `Authorization: Bearer <token>`' } });
  });

  it('do not let an OAuth token reach the REST API', async () => {
    const tokens = await authorize(await register(), caller.key, ['runs:read']);
    const response = await send('/runs', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(response.status).toBe(401);
  });
});
