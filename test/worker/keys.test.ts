/**
 * Keys (DESIGN.md Part 3, "Keys and scopes"): the root makes, lists and revokes them; D1
 * keeps their digests only; a revoked key is refused at once, and within a second in an
 * isolate that read it before; each key has a rate limit, past which it gets 429 with
 * Retry-After; only the root manages keys.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, json, settled, testEnv } from './app/client.ts';
import { GREET, WAITER } from './app/prompts.ts';
import { KEY_CACHE_MS } from '../../src/worker/keys/key-lookup.ts';
import { authorize, callMcp, register } from './app/oauth-client.ts';

interface MadeKey {
  id: string;
  name: string;
  scopes: string[];
  key: string;
  created_at: string;
}

const makeKey = async (name: string, scopes: unknown[]): Promise<MadeKey> => json<MadeKey>(await call('POST', '/keys', { body: { name, scopes } }), 201);
const listed = async () => (await json<{ keys: Record<string, unknown>[] }>(await call('GET', '/keys'), 200)).keys;
const sha256 = async (text: string) =>
  [...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))].map((b) => b.toString(16).padStart(2, '0')).join('');

beforeAll(async () => {
  await json(await call('PUT', '/prompts/greet', { body: GREET }), 201);
});

afterEach(() => {
  vi.useRealTimers();
});

describe('POST /keys', () => {
  it('answers 201 with the id, name, scopes, the key itself and when it was made', async () => {
    const made = await makeKey('chat-bridge', ['asks:answer:*', 'runs:read']);
    expect(Object.keys(made).sort()).toEqual(['created_at', 'id', 'key', 'name', 'scopes']);
    expect(made.name).toBe('chat-bridge');
    expect(made.scopes).toEqual(['asks:answer:*', 'runs:read']);
    expect(made.key).toMatch(/^rvk_[A-Za-z0-9_-]{43}$/);
    expect(Number.isNaN(Date.parse(made.created_at))).toBe(false);
  });

  it('makes a different key each time, for the same name and scopes too', async () => {
    const a = await makeKey('twin', ['runs:read']);
    const b = await makeKey('twin', ['runs:read']);
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
  });

  it('keeps a scope listed twice once', async () => {
    expect((await makeKey('twice', ['runs:read', 'runs:read'])).scopes).toEqual(['runs:read']);
  });

  const badScopes: unknown[] = [
    'runs:write',
    'RUNS:READ',
    'Runs:read',
    'runs:read ',
    ' runs:read',
    'runs:start',
    'runs:start:',
    'runs:start:Greet',
    'runs:start:gr eet',
    'runs:start:*x',
    'runs:start:greet:more',
    'asks:answer',
    'asks:answer:../greet',
    'admin:*',
    'root',
    '*',
    '',
    'prompts:write:greet',
    'runs:read\n',
  ];
  for (const scope of badScopes) {
    it(`refuses the scope ${JSON.stringify(scope)} with 400 naming it, and makes no key`, async () => {
      const before = (await listed()).length;
      const response = await call('POST', '/keys', { body: { name: 'bad', scopes: ['runs:read', scope] } });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { message: string; field: string; scope: string } };
      expect(body.error.field).toBe('scopes');
      expect(body.error.scope).toBe(scope);
      expect(body.error.message).toContain(JSON.stringify(scope));
      expect((await listed()).length).toBe(before);
    });
  }

  const badBodies: [string, unknown][] = [
    ['a scope that is not a string', { name: 'n', scopes: [42] }],
    ['no scopes', { name: 'n', scopes: [] }],
    ['scopes that are not a list', { name: 'n', scopes: 'runs:read' }],
    ['no name', { scopes: ['runs:read'] }],
    ['an empty name', { name: '  ', scopes: ['runs:read'] }],
    ['a name with a newline', { name: 'a\nb', scopes: ['runs:read'] }],
    ['a name too long', { name: 'n'.repeat(101), scopes: ['runs:read'] }],
    ['an unknown field', { name: 'n', scopes: ['runs:read'], key: 'rvk_mine' }],
  ];
  for (const [what, body] of badBodies) {
    it(`refuses ${what} with 400`, async () => {
      expect((await call('POST', '/keys', { body })).status).toBe(400);
    });
  }
});

describe('GET /keys', () => {
  it('lists each key with its id, name, scopes and times, never its text', async () => {
    const made = await makeKey('lister', ['runs:read']);
    const keys = await listed();
    const entry = keys.find((key) => key.id === made.id)!;
    expect(entry).toEqual({ id: made.id, name: 'lister', scopes: ['runs:read'], created_at: made.created_at, last_used_at: null, revoked_at: null });
    expect(JSON.stringify(keys)).not.toContain(made.key.slice(4));
  });

  it("records a key's use as last_used_at", async () => {
    const made = await makeKey('user', ['runs:read']);
    await json(await call('GET', '/runs', { token: made.key }), 200);
    const entry = (await listed()).find((key) => key.id === made.id)!;
    expect(typeof entry.last_used_at).toBe('string');
  });
});

describe('last_used_at', () => {
  it('is written at most once a minute per key, not on every request', async () => {
    const made = await makeKey('busy-reader', ['runs:read']);
    const lastUsed = async () =>
      (await testEnv.RUNVIL_DB.prepare('SELECT last_used_at FROM keys WHERE id = ?1').bind(made.id).all<{ last_used_at: string | null }>()).results[0]!
        .last_used_at;
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    await json(await call('GET', '/runs', { token: made.key }), 200);
    const first = await lastUsed();
    expect(first).toBe(new Date(start).toISOString());
    vi.setSystemTime(start + 30_000);
    await json(await call('GET', '/runs', { token: made.key }), 200);
    expect(await lastUsed()).toBe(first);
    vi.setSystemTime(start + 61_000);
    await json(await call('GET', '/runs', { token: made.key }), 200);
    expect(await lastUsed()).toBe(new Date(start + 61_000).toISOString());
  });
});

describe('D1', () => {
  it("holds each key's SHA-256 digest and nothing of its text", async () => {
    const made = await makeKey('digest-only', ['admin']);
    const { results } = await testEnv.RUNVIL_DB.prepare('SELECT * FROM keys').all<Record<string, unknown>>();
    const row = results.find((r) => r.id === made.id)!;
    expect(row.digest).toBe(await sha256(made.key));
    const everything = JSON.stringify(results);
    // No part of the secret past its prefix, not even a third of it.
    const secret = made.key.slice(4);
    for (let at = 0; at + 14 <= secret.length; at += 7) expect(everything).not.toContain(secret.slice(at, at + 14));
  });
});

describe('DELETE /keys/:id', () => {
  it('revokes the key: the very next request with it is refused with 401', async () => {
    const made = await makeKey('to-revoke', ['runs:read']);
    await json(await call('GET', '/runs', { token: made.key }), 200);
    const revoked = await json<{ revoked_at: string }>(await call('DELETE', `/keys/${made.id}`), 200);
    expect(typeof revoked.revoked_at).toBe('string');
    const refused = await call('GET', '/runs', { token: made.key });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('revoked');
    expect((await listed()).find((key) => key.id === made.id)!.revoked_at).toBe(revoked.revoked_at);
  });

  it('keeps the first revocation time when revoked again', async () => {
    const made = await makeKey('twice-revoked', ['runs:read']);
    const first = await json<{ revoked_at: string }>(await call('DELETE', `/keys/${made.id}`), 200);
    const second = await json<{ revoked_at: string }>(await call('DELETE', `/keys/${made.id}`), 200);
    expect(second.revoked_at).toBe(first.revoked_at);
  });

  it('answers 404 for a key that does not exist', async () => {
    expect((await call('DELETE', '/keys/key_000000000000000000000000')).status).toBe(404);
  });

  it(`is seen by an isolate that read the key before within ${KEY_CACHE_MS} ms, without waiting in the test`, async () => {
    expect(KEY_CACHE_MS).toBeLessThanOrEqual(1000);
    const made = await makeKey('other-isolate', ['runs:read']);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    await json(await call('GET', '/runs', { token: made.key }), 200);
    // Another isolate revokes it: D1 changes, this isolate's cache does not hear of it.
    await testEnv.RUNVIL_DB.prepare('UPDATE keys SET revoked_at = ?2 WHERE id = ?1').bind(made.id, new Date().toISOString()).run();
    vi.setSystemTime(Date.now() + KEY_CACHE_MS);
    expect((await call('GET', '/runs', { token: made.key })).status).toBe(401);
  });

  it('leaves a new key of the same name working, and the old one refused', async () => {
    const old = await makeKey('recreated', ['runs:read']);
    await json(await call('DELETE', `/keys/${old.id}`), 200);
    const fresh = await makeKey('recreated', ['runs:read']);
    expect((await call('GET', '/runs', { token: old.key })).status).toBe(401);
    await json(await call('GET', '/runs', { token: fresh.key }), 200);
  });
});

describe("a run's event stream read with a key", () => {
  /** Reads the stream to its end; the test's timeout is the bound on a stream that never ends. */
  async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += new TextDecoder().decode(value);
    }
  }

  for (const [how, revoke] of [
    ['through DELETE /keys/:id', async (id: string) => void (await json(await call('DELETE', `/keys/${id}`), 200))],
    [
      'by another isolate (D1 alone changes)',
      async (id: string) => void (await testEnv.RUNVIL_DB.prepare('UPDATE keys SET revoked_at = ?2 WHERE id = ?1').bind(id, new Date().toISOString()).run()),
    ],
  ] as const) {
    it(`ends when the key is revoked ${how}, though the run still waits`, async () => {
      await call('PUT', '/prompts/waiter', { body: WAITER });
      const run = (await json<{ run_id: string }>(await call('POST', '/prompts/waiter/runs', { body: {} }), 202)).run_id;
      expect((await settled(run)).status).toBe('suspended');
      const made = await makeKey(`stream-${how}`, ['runs:read']);
      const response = await call('GET', `/runs/${run}/events`, { token: made.key });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain('run_started');
      await revoke(made.id);
      await readToEnd(reader);
      expect((await call('GET', `/runs/${run}/events`, { token: made.key })).status).toBe(401);
      expect((await call('GET', `/runs/${run}`)).status).toBe(200);
      expect((await json<{ status: string }>(await call('GET', `/runs/${run}`), 200)).status).toBe('suspended');
    });
  }
});

describe('only the root manages keys', () => {
  it('refuses a key with admin making, listing or revoking keys, with 403 naming root', async () => {
    const admin = await makeKey('admin', ['admin']);
    const victim = await makeKey('victim', ['runs:read']);
    for (const [method, path, body] of [
      ['POST', '/keys', { name: 'minted', scopes: ['admin'] }],
      ['GET', '/keys', undefined],
      ['DELETE', `/keys/${victim.id}`, undefined],
    ] as const) {
      const response = await call(method, path, { token: admin.key, ...(body ? { body } : {}) });
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: { scope: string } }).error.scope).toBe('root');
    }
    expect((await listed()).some((key) => key.name === 'minted')).toBe(false);
    expect((await listed()).find((key) => key.id === victim.id)!.revoked_at).toBeNull();
  });
});

describe('a key that is almost a real one', () => {
  it('is refused with 401: a prefix, a suffix, a changed case, a changed character, padding', async () => {
    const made = await makeKey('real', ['runs:read']);
    const key = made.key;
    const last = key.at(-1)!;
    const variants = [
      key.slice(0, -1),
      key.slice(0, 20),
      `${key}A`,
      `A${key}`,
      key.toUpperCase(),
      `RVK_${key.slice(4)}`,
      key.slice(0, -1) + (last === 'A' ? 'B' : 'A'),
      'rvk_' + key.slice(5) + 'x',
      key.slice(4),
      `${key} ${key}`,
      `${key}%00`,
    ];
    for (const variant of variants) {
      const response = await call('GET', '/runs', { token: variant });
      expect(response.status, variant).toBe(401);
    }
    await json(await call('GET', '/runs', { token: key }), 200);
  });
});

describe('the rate limit', () => {
  it('answers 429 with Retry-After once a key is past its requests for the minute, that key only', async () => {
    const busy = await makeKey('busy', ['runs:read']);
    const calm = await makeKey('calm', ['runs:read']);
    const limiter = testEnv.RUNVIL_KEY_LIMIT!;
    // Spends the rest of this minute's budget through the binding itself, then asks once more.
    // A minute that turns between the two starts a fresh budget: then spend it again.
    let response: Response | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      while ((await limiter.limit({ key: `key:${busy.id}` })).success);
      response = await call('GET', '/runs', { token: busy.key });
      if (response.status === 429) break;
    }
    expect(response!.status).toBe(429);
    expect(response!.headers.get('retry-after')).toBe('60');
    expect(((await response!.json()) as { error: { message: string } }).error.message).toContain('rate limit');
    await json(await call('GET', '/runs', { token: calm.key }), 200);
    // The root is the operator's own: never limited.
    await json(await call('GET', '/runs'), 200);
  });
});

describe('the rate limit of an OAuth client', () => {
  it('counts its token as a key is counted: 429 past the limit, for that client only', async () => {
    const signer = await makeKey('oauth-limit-signer', ['runs:read']);
    const busy = await register();
    const calm = await register();
    const busyToken = (await authorize(busy, signer.key, ['runs:read'])).access_token;
    const calmToken = (await authorize(calm, signer.key, ['runs:read'])).access_token;
    const limiter = testEnv.RUNVIL_KEY_LIMIT!;
    let status = 0;
    for (let attempt = 0; attempt < 3 && status !== 429; attempt++) {
      while ((await limiter.limit({ key: `oauth:${busy.client_id}` })).success);
      status = (await callMcp(busyToken)).status;
    }
    expect(status).toBe(429);
    expect((await callMcp(calmToken)).status).toBe(200);
  });
});

describe('GET /whoami', () => {
  it('tells a key its name and scopes, and the root that it is the root', async () => {
    const made = await makeKey('reader', ['runs:read']);
    expect(await json(await call('GET', '/whoami', { token: made.key }), 200)).toEqual({ kind: 'key', id: made.id, name: 'reader', scopes: ['runs:read'] });
    expect(await json(await call('GET', '/whoami'), 200)).toEqual({ kind: 'root', scopes: null });
    expect((await call('GET', '/whoami', { token: null })).status).toBe(401);
  });
});
