/**
 * An attacker's table for OAuth on /mcp: each way to get or use a token without the person's
 * consent is refused, and changes nothing (no code, no token, no grant). Wrong PKCE
 * verifiers, challenges that are not S256, redirect URIs other than the registered ones,
 * codes reused or taken to another client, tokens of a deleted client, expired or forged
 * tokens, and consent posts without a key, with a key that cannot grant what is ticked, or
 * without the browser that opened the page.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_TOKEN, call, json, testEnv } from './app/client.ts';
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
} from './app/oauth-client.ts';
import { oauthHelpers } from '../../src/worker/oauth/oauth-provider.ts';
import { KEY_CACHE_MS } from '../../src/worker/keys/key-lookup.ts';

interface MadeKey {
  id: string;
  key: string;
}
const makeKey = async (name: string, scopes: string[]): Promise<MadeKey> => json<MadeKey>(await call('POST', '/keys', { body: { name, scopes } }), 201);

let signer: MadeKey;
beforeAll(async () => {
  signer = await makeKey('attack-signer', ['runs:read', 'runs:start:*', 'asks:answer:*']);
});

afterEach(() => {
  vi.useRealTimers();
});

/** A consent granted and its code, not yet exchanged. */
async function codeFor(client: Client, challenge: string): Promise<string> {
  const consent = await openConsent(authorizePath(client, challenge));
  const code = codeOf(await postConsent(consent, { key: signer.key, scope: ['runs:read'] }));
  expect(code).not.toBeNull();
  return code!;
}

const errorOf = async (response: Response): Promise<string> => ((await response.json()) as { error: string }).error;

describe('a wrong PKCE verifier', () => {
  const wrong: [string, (verifier: string, challenge: string) => Record<string, string>][] = [
    ['another verifier', () => ({ code_verifier: 'x'.repeat(43) })],
    ['the challenge itself (a plain verifier)', (_verifier, challenge) => ({ code_verifier: challenge })],
    ['the verifier in other case', (verifier) => ({ code_verifier: verifier.toUpperCase() === verifier ? verifier.toLowerCase() : verifier.toUpperCase() })],
    ['the verifier one character short', (verifier) => ({ code_verifier: verifier.slice(0, -1) })],
    ['an empty verifier', () => ({ code_verifier: '' })],
    ['no verifier', () => ({})],
  ];
  for (const [name, fields] of wrong) {
    it(`gets no token: ${name}`, async () => {
      const client = await register();
      const { verifier, challenge } = await pkce();
      const code = await codeFor(client, challenge);
      const response = await tokenRequest({
        grant_type: 'authorization_code',
        client_id: client.client_id,
        code,
        redirect_uri: REDIRECT_URI,
        ...fields(verifier, challenge),
      });
      expect(response.status).toBe(400);
      expect(await errorOf(response)).toMatch(/invalid_grant|invalid_request/);
    });
  }
});

describe('an authorization request without an S256 challenge', () => {
  const requests: [string, Record<string, string>][] = [
    ['plain', { code_challenge_method: 'plain' }],
    ['no method (which means plain)', { code_challenge_method: '' }],
    ['S512', { code_challenge_method: 'S512' }],
    ['s256 in lower case', { code_challenge_method: 's256' }],
    ['no challenge at all', { code_challenge: '', code_challenge_method: '' }],
  ];
  for (const [name, params] of requests) {
    it(`is sent back to the client as invalid_request, with no page to consent on: ${name}`, async () => {
      const client = await register();
      const { challenge } = await pkce();
      const path = authorizePath(client, challenge, params).replace(/&code_challenge(_method)?=(?=&|$)/g, '');
      const response = await send(path);
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('code')).toBeNull();
      expect(await response.text()).not.toContain('name="handle"');
    });
  }
});

describe('a redirect URI other than the registered one', () => {
  const uris = [
    'http://localhost:33418/oauth/callback',
    'http://127.0.0.2:33418/oauth/callback',
    'http://127.0.0.1:33418/oauth/callback/',
    'http://127.0.0.1:33418/oauth/callback/../evil',
    'http://127.0.0.1:33418/oauth/callback?next=https://evil.example',
    'http://127.0.0.1:33418/oauth/callbackx',
    'https://evil.example/oauth/callback',
    'https://127.0.0.1:33418/oauth/callback',
    'http://localhost.evil.example:33418/oauth/callback',
    'javascript:alert(1)',
  ];
  for (const uri of uris) {
    it(`is refused at the authorization endpoint, on our page, never by a redirect: ${uri}`, async () => {
      const client = await register();
      const { challenge } = await pkce();
      const response = await send(authorizePath(client, challenge, { redirect_uri: uri }));
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      const html = await response.text();
      expect(html).toContain('Invalid redirect URI');
      expect(html).not.toContain('name="handle"');
    });
  }

  it('may differ in its port on the loopback (RFC 8252: a native app listens on the port it gets), and the page says where access goes', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge, { redirect_uri: 'http://127.0.0.1:33419/oauth/callback' }));
    expect(consent.status).toBe(200);
    expect(consent.html).toContain('an app on your computer');
  });

  it('is refused at the token endpoint when it differs from the one the code was issued for', async () => {
    const client = await register([REDIRECT_URI, 'http://127.0.0.1:33418/other']);
    const { verifier, challenge } = await pkce();
    const code = await codeFor(client, challenge);
    const response = await exchange(client, code, verifier, 'http://127.0.0.1:33418/other');
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toBe('invalid_grant');
  });

  it('cannot be registered when it is neither https nor loopback http', async () => {
    const response = await send('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'evil', redirect_uris: ['http://evil.example/cb'], token_endpoint_auth_method: 'none' }),
    });
    expect(response.status).toBe(400);
  });
});

describe('a code used twice', () => {
  it('gets no second token, and the first token stops working (the code was stolen, or replayed)', async () => {
    const client = await register();
    const { verifier, challenge } = await pkce();
    const code = await codeFor(client, challenge);
    const first = await exchange(client, code, verifier);
    expect(first.status).toBe(200);
    const { access_token } = (await first.json()) as { access_token: string };
    const second = await exchange(client, code, verifier);
    expect(second.status).toBe(400);
    expect(await errorOf(second)).toBe('invalid_grant');
    expect((await callMcp(access_token)).status).toBe(401);
  });
});

describe("a code of another client's", () => {
  it('gets no token for the client that took it, with the right verifier too', async () => {
    const victim = await register();
    const thief = await register();
    const { verifier, challenge } = await pkce();
    const code = await codeFor(victim, challenge);
    const stolen = await tokenRequest({
      grant_type: 'authorization_code',
      client_id: thief.client_id,
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
    });
    expect(stolen.status).toBeGreaterThanOrEqual(400);
    expect(stolen.status).toBeLessThan(500);
    expect(await errorOf(stolen)).toMatch(/invalid_grant|invalid_client/);
  });

  it("gets no token with an unknown client id, nor with another client's refresh token", async () => {
    const owner = await register();
    const other = await register();
    const tokens = await authorize(owner, signer.key, ['runs:read']);
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: other.client_id });
    expect(refresh.status).toBeGreaterThanOrEqual(400);
    expect(refresh.status).toBeLessThan(500);
    const unknown = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'no-such-client' });
    expect(unknown.status).toBe(401);
  });
});

describe('a token of a client that was deleted', () => {
  it('is refused on /mcp, and its refresh token gets no new one', async () => {
    const client = await register();
    const tokens = await authorize(client, signer.key, ['runs:read']);
    expect((await callMcp(tokens.access_token)).status).toBe(200);
    await oauthHelpers(testEnv)!.deleteClient(client.client_id);
    const refused = await callMcp(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id });
    expect(refresh.status).toBeGreaterThanOrEqual(400);
    const { challenge } = await pkce();
    expect((await send(authorizePath(client, challenge))).status).toBe(400);
  });
});

describe('a token whose granting key was revoked', () => {
  it('is refused on /mcp within the second a revocation takes, and its refresh ends the grant', async () => {
    const granting = await makeKey('granting-key', ['runs:read']);
    const client = await register();
    const tokens = await authorize(client, granting.key, ['runs:read']);
    expect((await callMcp(tokens.access_token)).status).toBe(200);
    expect((await call('DELETE', `/keys/${granting.id}`)).status).toBeLessThan(300);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + KEY_CACHE_MS + 1 });
    const refused = await callMcp(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
    expect(((await refused.json()) as { error_description: string }).error_description).toContain('revoked');
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id });
    expect(refresh.status).toBe(400);
    expect(await errorOf(refresh)).toBe('invalid_grant');
  });

  it("is refused once the root token that granted it is changed (a grant of the root's)", async () => {
    const tokens = await authorize(await register(), API_TOKEN, ['runs:read']);
    expect((await callMcp(tokens.access_token)).status).toBe(200);
    const rotated = { ...testEnv, RUNVIL_API_TOKEN: 'a-new-root-token' };
    const request = new Request(`${ORIGIN}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` }, body: '{}' });
    expect((await worker.fetch(request, rotated)).status).toBe(401);
  });
});

describe('an access token past its hour', () => {
  it('is refused on /mcp with invalid_token; the refresh token still gets a new one', async () => {
    const client = await register();
    const tokens = await authorize(client, signer.key, ['runs:read']);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3601 * 1000 });
    const refused = await callMcp(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
    expect((await callMcp(((await refreshed.json()) as { access_token: string }).access_token)).status).toBe(200);
  });

  it('and its refresh token past its 30 days gets none', async () => {
    const client = await register();
    const tokens = await authorize(client, signer.key, ['runs:read']);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 31 * 86400 * 1000 });
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id });
    expect(refreshed.status).toBe(400);
    expect(await errorOf(refreshed)).toBe('invalid_grant');
  });
});

describe('a forged token', () => {
  it('is refused by the provider, never taken as a key', async () => {
    const client = await register();
    const { access_token } = await authorize(client, signer.key, ['runs:read']);
    const [user, grant, secret] = access_token.split(':') as [string, string, string];
    const forged = [
      `${user}:${grant}:${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}`,
      `root:${grant}:${secret}`,
      `${user}:${'g'.repeat(grant.length)}:${secret}`,
      'root:grant:secret',
      `${signer.key}:x:y`,
    ];
    for (const token of forged) {
      const response = await callMcp(token);
      expect(response.status, token).toBe(401);
      expect(response.headers.get('www-authenticate'), token).toContain('invalid_token');
    }
  });
});

describe('a consent post without a key that may grant', () => {
  /** Opens a page for a new client, posts `fields`, and checks that the page came back with `status` naming `problem`, and no code. */
  async function refused(fields: Parameters<typeof postConsent>[1], status: number, problem: RegExp) {
    const client = await register();
    const { verifier, challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge));
    const response = await postConsent(consent, fields);
    expect(response.status).toBe(status);
    expect(codeOf(response)).toBeNull();
    const html = await response.text();
    expect(html).toMatch(problem);
    // The page is shown again on the same handle: the person can fix it and grant.
    expect(html).toContain(`value="${consent.handle}"`);
    const fixed = await postConsent(consent, { key: signer.key, scope: ['runs:read'] });
    expect((await exchange(client, codeOf(fixed)!, verifier)).status).toBe(200);
  }

  it('asks for a key when the post has none', () => refused({ scope: ['runs:read'] }, 401, /Sign in with a Runvil key/));
  it('asks for a key when the key is empty', () => refused({ key: '', scope: ['runs:read'] }, 401, /Sign in with a Runvil key/));
  it('refuses a key the deployment does not have', () => refused({ key: 'rvk_' + 'A'.repeat(43), scope: ['runs:read'] }, 401, /not one of this deployment/));
  it('refuses a wrong root token', () => refused({ key: `${API_TOKEN}x`, scope: ['runs:read'] }, 401, /not one of this deployment/));
  it('refuses a key with spaces in it', () => refused({ key: `${API_TOKEN} x`, scope: ['runs:read'] }, 401, /not a Runvil key/));

  it('refuses an OAuth access token in place of a key', async () => {
    const { access_token } = await authorize(await register(), signer.key, ['runs:read']);
    await refused({ key: access_token, scope: ['runs:read'] }, 401, /not one of this deployment/);
  });

  it('refuses a revoked key', async () => {
    const revoked = await makeKey('revoked-signer', ['runs:read']);
    expect((await call('DELETE', `/keys/${revoked.id}`)).status).toBeLessThan(300);
    await refused({ key: revoked.key, scope: ['runs:read'] }, 401, /not one of this deployment, or it was revoked/);
  });

  const beyond: [string, string[], string[], string][] = [
    ['runs:start:* for a key with runs:start:greet', ['runs:start:greet'], ['runs:start:*'], 'runs:start:\\*'],
    ['asks:answer:* for a key with asks:answer:greet', ['asks:answer:greet'], ['asks:answer:*'], 'asks:answer:\\*'],
    ['another prompt', ['runs:start:greet'], ['runs:start:triage'], 'runs:start:triage'],
    ['admin for a key with every other scope', ['runs:read', 'runs:start:*', 'asks:answer:*', 'prompts:write'], ['admin'], 'admin'],
    ['prompts:write for a reader', ['runs:read'], ['prompts:write'], 'prompts:write'],
    ['one too many among allowed ones', ['runs:read'], ['runs:read', 'runs:start:*'], 'runs:start:\\*'],
  ];
  for (const [name, held, ticked, named] of beyond) {
    it(`refuses scopes beyond the key's with 403 naming them: ${name}`, async () => {
      const key = await makeKey(`narrow-${name.length}`, held);
      const client = await register();
      const { verifier, challenge } = await pkce();
      const consent = await openConsent(authorizePath(client, challenge));
      const response = await postConsent(consent, { key: key.key, scope: ticked });
      expect(response.status).toBe(403);
      expect(codeOf(response)).toBeNull();
      expect(await response.text()).toMatch(new RegExp(`does not have ${named}`));
      const fixed = await postConsent(consent, { key: key.key, scope: held.slice(0, 1) });
      expect((await exchange(client, codeOf(fixed)!, verifier)).status).toBe(200);
    });
  }

  it('refuses what is not a scope of Runvil, and an empty grant', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge));
    for (const scope of [['runs:write'], ['RUNS:READ'], ['root'], ['runs:start:../x']]) {
      const response = await postConsent(consent, { key: API_TOKEN, scope });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('not a scope of Runvil');
    }
    const none = await postConsent(consent, { key: API_TOKEN, scope: [] });
    expect(none.status).toBe(400);
    expect(await none.text()).toContain('Tick at least one scope');
  });
});

describe('a consent post from elsewhere than the page', () => {
  it('without the cookie the page set in the browser that opened it gets no code', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge));
    for (const cookie of ['', `${consent.cookie.split('=')[0]}=forged`]) {
      const response = await postConsent(consent, { key: API_TOKEN, scope: ['runs:read'] }, cookie);
      expect(response.status).toBe(400);
      expect(codeOf(response)).toBeNull();
    }
  });

  it("with another page's handle, or a handle already spent, gets no code", async () => {
    const client = await register();
    const { challenge } = await pkce();
    const mine = await openConsent(authorizePath(client, challenge));
    const theirs = await openConsent(authorizePath(client, challenge));
    const swapped = await postConsent(mine, { key: API_TOKEN, scope: ['runs:read'], handle: theirs.handle });
    expect(swapped.status).toBe(400);
    expect(codeOf(swapped)).toBeNull();
    expect(codeOf(await postConsent(mine, { key: API_TOKEN, scope: ['runs:read'] }))).not.toBeNull();
    const again = await postConsent(mine, { key: API_TOKEN, scope: ['runs:read'] });
    expect(again.status).toBe(400);
    expect(codeOf(again)).toBeNull();
  });

  it('that is not a form gets no code', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const consent = await openConsent(authorizePath(client, challenge));
    const response = await send(consent.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: consent.cookie },
      body: JSON.stringify({ handle: consent.handle, key: API_TOKEN, scope: ['runs:read'], decision: 'approve' }),
    });
    expect(response.status).toBe(400);
    expect(codeOf(response)).toBeNull();
  });
});

describe('a request naming another host', () => {
  it('reaches no OAuth endpoint: the metadata and the consent page are served on the public origin only', async () => {
    const client = await register();
    const { challenge } = await pkce();
    const elsewhere = (path: string) => testWorkerFetch(`https://evil.example${path}`);
    expect((await elsewhere('/.well-known/oauth-authorization-server')).status).toBe(404);
    expect((await elsewhere(authorizePath(client, challenge))).status).toBe(404);
  });
});

const testWorkerFetch = (url: string): Promise<Response> => worker.fetch(new Request(url, { redirect: 'manual' }), testEnv);
