/**
 * Scopes on every route (DESIGN.md Part 3, "Keys and scopes"), as an attacker holding a key
 * would try them: each route with keys that lack its scope (a scope for another prompt, a
 * reading key writing, a writing key reading, admin managing keys) is refused with 403
 * naming the scope it needs, and changes nothing; a key with the scope gets through.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, json, settled, testEnv } from './app/client.ts';
import { GREET, WAITER } from './app/prompts.ts';
import { allows, isScope, ROOT_ONLY } from '../../src/worker/keys/scopes.ts';
import type { Principal } from '../../src/worker/http/auth.ts';

const makeKey = async (scopes: string[]): Promise<string> =>
  (await json<{ key: string }>(await call('POST', '/keys', { body: { name: scopes.join(' '), scopes } }), 201)).key;

const keys = new Map<string, string>();
/** A key holding exactly `scopes`, made once. */
async function keyWith(...scopes: string[]): Promise<string> {
  const label = scopes.join(' ');
  if (!keys.has(label)) keys.set(label, await makeKey(scopes));
  return keys.get(label)!;
}

let greetRun: string;
let waiterRun: string;

beforeAll(async () => {
  await json(await call('PUT', '/prompts/greet', { body: GREET }), 201);
  await json(await call('PUT', '/prompts/waiter', { body: WAITER }), 201);
  greetRun = (await json<{ run_id: string }>(await call('POST', '/prompts/greet/runs', { body: { args: { name: 'keys' } } }), 202)).run_id;
  await settled(greetRun);
  waiterRun = (await json<{ run_id: string }>(await call('POST', '/prompts/waiter/runs', { body: {} }), 202)).run_id;
  expect((await settled(waiterRun)).status).toBe('suspended');
});

/** A route, the scope it needs, and the scope sets of keys that must not get through. */
interface Row {
  method: string;
  path: () => string;
  body?: () => unknown;
  needs: () => string;
  without: string[][];
}

const reading = (path: () => string): Row => ({
  method: 'GET',
  path,
  needs: () => 'runs:read',
  without: [['prompts:write'], ['runs:start:*'], ['asks:answer:*'], ['runs:start:greet', 'asks:answer:greet']],
});

const ROWS: Row[] = [
  reading(() => '/prompts'),
  reading(() => '/prompts/greet'),
  reading(() => '/runs'),
  reading(() => '/runs?prompt=greet'),
  reading(() => '/asks'),
  reading(() => '/asks?status=answered'),
  reading(() => `/runs/${greetRun}`),
  reading(() => `/runs/${waiterRun}`),
  reading(() => `/runs/${greetRun}/events`),
  reading(() => `/runs/${greetRun}/files/`),
  reading(() => `/runs/${greetRun}/files/greeting.txt`),
  reading(() => `/runs/${greetRun}/notifications`),
  reading(() => `/runs/${greetRun}/test.yaml`),
  reading(() => `/runs/${greetRun}/journal`),
  reading(() => `/runs/${waiterRun}/journal`),
  {
    method: 'PUT',
    path: () => '/prompts/greet',
    body: () => GREET.replace('Greets in pure Lua.', 'Defaced.'),
    needs: () => 'prompts:write',
    without: [['runs:read'], ['runs:start:*', 'asks:answer:*'], ['runs:start:greet']],
  },
  {
    method: 'PUT',
    path: () => '/prompts/planted',
    body: () => GREET.replace('name: greet', 'name: planted'),
    needs: () => 'prompts:write',
    without: [['runs:read'], ['runs:start:planted']],
  },
  {
    method: 'POST',
    path: () => '/prompts/greet/runs',
    body: () => ({ args: {} }),
    needs: () => 'runs:start:greet',
    without: [['runs:read'], ['runs:start:waiter'], ['runs:start:gree'], ['runs:start:greet-'], ['asks:answer:greet'], ['asks:answer:*'], ['prompts:write']],
  },
  {
    method: 'POST',
    path: () => '/prompts/GREET/runs',
    body: () => ({ args: {} }),
    needs: () => 'runs:start:GREET',
    without: [['runs:start:greet']],
  },
  {
    method: 'POST',
    path: () => `/runs/${waiterRun}/asks/0-1`,
    body: () => ({ answer: 'forged' }),
    needs: () => 'asks:answer:waiter',
    without: [['runs:read'], ['asks:answer:greet'], ['runs:start:waiter'], ['runs:start:*'], ['prompts:write']],
  },
  {
    method: 'POST',
    path: () => `/runs/${waiterRun}/cancel`,
    body: () => ({}),
    needs: () => 'runs:start:waiter',
    without: [['runs:read'], ['runs:start:greet'], ['asks:answer:waiter'], ['asks:answer:*']],
  },
  {
    method: 'POST',
    path: () => `/runs/${greetRun}/fork`,
    body: () => ({ at: 0 }),
    needs: () => 'runs:read',
    without: [['runs:start:greet'], ['runs:start:*']],
  },
  {
    method: 'POST',
    path: () => `/runs/${greetRun}/fork`,
    body: () => ({ at: 0 }),
    needs: () => 'runs:start:greet',
    without: [['runs:read'], ['runs:read', 'runs:start:waiter'], ['runs:read', 'asks:answer:greet']],
  },
  { method: 'GET', path: () => '/packs', needs: () => 'admin', without: [['runs:read'], ['runs:read', 'prompts:write', 'runs:start:*', 'asks:answer:*']] },
  { method: 'GET', path: () => '/triggers', needs: () => 'admin', without: [['runs:read'], ['prompts:write']] },
  {
    method: 'POST',
    path: () => `/runs/${waiterRun}/tool-results/0-1`,
    body: () => ({ ok: true, output: 'x' }),
    needs: () => 'admin',
    without: [['runs:read'], ['runs:start:*', 'asks:answer:*']],
  },
  { method: 'GET', path: () => '/keys', needs: () => 'root', without: [['admin'], ['runs:read']] },
  { method: 'POST', path: () => '/keys', body: () => ({ name: 'minted', scopes: ['admin'] }), needs: () => 'root', without: [['admin']] },
  { method: 'DELETE', path: () => '/keys/key_000000000000000000000000', needs: () => 'root', without: [['admin']] },
];

describe('a key without the scope a route needs', () => {
  for (const row of ROWS) {
    for (const scopes of row.without) {
      it(`${row.method} ${row.path.toString().replace(/^\(\) => /, '')} with [${scopes.join(', ')}]: 403 naming the scope`, async () => {
        const key = await keyWith(...scopes);
        const response = await call(row.method, row.path(), { token: key, ...(row.body ? { body: row.body() } : {}) });
        const body = (await response.json()) as { error: { message: string; scope: string } };
        expect(response.status, JSON.stringify(body)).toBe(403);
        expect(body.error.scope).toBe(row.needs());
        if (row.needs() !== 'root') expect(body.error.message).toContain(row.needs());
      });
    }
  }
});

describe('what a refused key leaves', () => {
  it('the prompts as they were, no prompt planted, the ask pending, the run not cancelled, no key minted', async () => {
    expect((await json<{ source: string }>(await call('GET', '/prompts/greet'), 200)).source).toContain('Greets in pure Lua.');
    expect((await call('GET', '/prompts/planted')).status).toBe(404);
    const waiter = await json<{ status: string; pending: { ask_id: string }[] }>(await call('GET', `/runs/${waiterRun}`), 200);
    expect(waiter.status).toBe('suspended');
    expect(waiter.pending.map((ask) => ask.ask_id)).toEqual(['0-1']);
    const minted = await testEnv.RUNVIL_DB.prepare("SELECT id FROM keys WHERE name = 'minted'").all();
    expect(minted.results).toEqual([]);
  });
});

describe('a key with the scope', () => {
  it('reads with runs:read', async () => {
    const key = await keyWith('runs:read');
    for (const path of [
      '/prompts',
      '/runs',
      '/asks',
      `/runs/${greetRun}`,
      `/runs/${greetRun}/files/greeting.txt`,
      `/runs/${greetRun}/test.yaml`,
      `/runs/${greetRun}/journal`,
    ]) {
      expect((await call('GET', path, { token: key })).status, path).toBe(200);
    }
  });

  it('starts runs of its prompt with runs:start:greet, and of any with runs:start:*', async () => {
    await json(await call('POST', '/prompts/greet/runs', { token: await keyWith('runs:start:greet'), body: {} }), 202);
    await json(await call('POST', '/prompts/greet/runs', { token: await keyWith('runs:start:*'), body: {} }), 202);
  });

  it('uploads with prompts:write', async () => {
    const source = GREET.replace('name: greet', 'name: uploaded-by-key');
    await json(await call('PUT', '/prompts/uploaded-by-key', { token: await keyWith('prompts:write'), body: source }), 201);
  });

  it('reads the configuration with admin', async () => {
    const key = await keyWith('admin');
    expect((await call('GET', '/packs', { token: key })).status).toBe(200);
    expect((await call('GET', '/triggers', { token: key })).status).toBe(200);
  });

  it('answers an ask of its prompt with asks:answer:waiter, seeing that ask only without runs:read', async () => {
    const run = (await json<{ run_id: string }>(await call('POST', '/prompts/waiter/runs', { body: {} }), 202)).run_id;
    await settled(run);
    const answered = await json<{ ask: { ask_id: string; status: string }; run: { status: string } }>(
      await call('POST', `/runs/${run}/asks/0-1`, { token: await keyWith('asks:answer:waiter'), body: { answer: 'yes' } }),
      200,
    );
    expect(answered.ask.status).toBe('answered');
    expect(Object.keys(answered).sort()).toEqual(['ask', 'run']);
  });

  it('answers with the run view when the key may also read runs', async () => {
    const run = (await json<{ run_id: string }>(await call('POST', '/prompts/waiter/runs', { body: {} }), 202)).run_id;
    await settled(run);
    const view = await json<{ run_id: string }>(
      await call('POST', `/runs/${run}/asks/0-1`, { token: await keyWith('asks:answer:*', 'runs:read'), body: { answer: 'yes' } }),
      200,
    );
    expect(view.run_id).toBe(run);
  });

  it('cancels a run of its prompt with runs:start:waiter', async () => {
    const run = (await json<{ run_id: string }>(await call('POST', '/prompts/waiter/runs', { body: {} }), 202)).run_id;
    await settled(run);
    const view = await json<{ status: string }>(await call('POST', `/runs/${run}/cancel`, { token: await keyWith('runs:start:waiter'), body: {} }), 200);
    expect(view.status).toBe('cancelled');
  });

  it('forks a run of its prompt with runs:read and runs:start:greet', async () => {
    await json(await call('POST', `/runs/${greetRun}/fork`, { token: await keyWith('runs:read', 'runs:start:greet'), body: { at: 0 } }), 202);
  });
});

describe('allows', () => {
  const key = (...scopes: string[]): Principal => ({ kind: 'key', id: 'key_x', name: 'x', scopes });
  const oauth = (...scopes: string[]): Principal => ({ kind: 'oauth', clientId: 'c', scopes });

  it('lets the root do everything, managing keys included', () => {
    for (const scope of ['runs:read', 'runs:start:greet', 'admin', ROOT_ONLY]) expect(allows({ kind: 'root' }, scope)).toBe(true);
  });

  it('lets admin do everything but what only the root may', () => {
    for (const scope of ['runs:read', 'runs:start:greet', 'asks:answer:x', 'prompts:write']) expect(allows(key('admin'), scope)).toBe(true);
    expect(allows(key('admin'), ROOT_ONLY)).toBe(false);
    expect(allows(oauth('admin'), ROOT_ONLY)).toBe(false);
  });

  it('lets a * scope cover every prompt of its own family only', () => {
    expect(allows(key('runs:start:*'), 'runs:start:anything')).toBe(true);
    expect(allows(key('runs:start:*'), 'asks:answer:anything')).toBe(false);
    expect(allows(key('asks:answer:*'), 'runs:start:greet')).toBe(false);
    expect(allows(key('runs:start:*'), 'runs:read')).toBe(false);
    expect(allows(key('runs:start:*', 'asks:answer:*', 'prompts:write'), 'runs:read')).toBe(false);
  });

  it('compares scopes exactly', () => {
    expect(allows(key('runs:start:greet'), 'runs:start:greet')).toBe(true);
    for (const scope of ['runs:start:GREET', 'runs:start:gree', 'runs:start:greet2', 'runs:start:', 'runs:start'])
      expect(allows(key('runs:start:greet'), scope)).toBe(false);
    expect(allows(key('runs:read'), 'RUNS:READ')).toBe(false);
  });

  it('takes an OAuth grant as a key takes its scopes', () => {
    expect(allows(oauth('runs:read'), 'runs:read')).toBe(true);
    expect(allows(oauth('runs:read'), 'runs:start:greet')).toBe(false);
  });

  it('knows the scopes a key may hold', () => {
    for (const scope of ['runs:read', 'runs:start:greet', 'runs:start:*', 'asks:answer:a_b-1', 'asks:answer:*', 'prompts:write', 'admin'])
      expect(isScope(scope)).toBe(true);
    for (const scope of [ROOT_ONLY, '*', 'runs:*', 'runs:start:**', 'runs:read:greet', 'admin:greet', 'asks:answer:-x']) expect(isScope(scope)).toBe(false);
  });
});
