/**
 * `POST /prompts/:name/runs` with an `Idempotency-Key`: a retry whose first response was lost
 * reaches the run the first request started, concurrent duplicates make one run, and a key
 * that is no key is refused with 400.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, json, settled } from './app/client.ts';
import { DESK, GREET } from './app/prompts.ts';

beforeAll(async () => {
  for (const [name, body] of [
    ['greet', GREET],
    ['desk', DESK],
  ] as const)
    expect([200, 201]).toContain((await call('PUT', `/prompts/${name}`, { body })).status);
});

const start = (prompt: string, key: string | null, body: object = { args: { name: 'Key' } }, query = '') =>
  call('POST', `/prompts/${prompt}/runs${query}`, { body, headers: key === null ? {} : { 'idempotency-key': key } });

describe('a start with an Idempotency-Key', () => {
  it('starts a run (202, duplicate false); the same key again reaches it (200, duplicate true) and starts nothing', async () => {
    const first = await json<{ run_id: string; duplicate: boolean }>(await start('greet', 'key-one'), 202);
    expect(first).toEqual({ run_id: expect.stringMatching(/^[0-9a-f]{64}$/), status: 'running', duplicate: false });
    await settled(first.run_id);
    const again = await json(await start('greet', 'key-one'), 200);
    expect(again).toEqual({ run_id: first.run_id, status: 'completed', duplicate: true });
    const waited = await json(await start('greet', 'key-one', {}, '?wait=5'), 200);
    expect(waited).toMatchObject({ run_id: first.run_id, status: 'completed', result: 'hello Key x1', duplicate: true });
  });

  it('with a different prompt, or another key, is another run', async () => {
    const a = await json<{ run_id: string }>(await start('greet', 'key-two'), 202);
    const b = await json<{ run_id: string }>(await start('desk', 'key-two', {}), 202);
    const c = await json<{ run_id: string }>(await start('greet', 'key-two-b'), 202);
    const d = await json<{ run_id: string }>(await start('greet', 'KEY-TWO'), 202);
    expect(new Set([a.run_id, b.run_id, c.run_id, d.run_id]).size).toBe(4);
  });

  it('makes one run of twenty concurrent starts with one key', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, () => start('greet', 'key-concurrent')));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ run_id: string; duplicate: boolean }>));
    expect(new Set(bodies.map((b) => b.run_id)).size).toBe(1);
    expect(bodies.filter((b) => !b.duplicate)).toHaveLength(1);
    expect(responses.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 202]);
  });

  it('without a key starts a new run each time, as before', async () => {
    const a = await json<{ run_id: string }>(await start('greet', null), 202);
    const b = await json<{ run_id: string }>(await start('greet', null), 202);
    expect(a).not.toHaveProperty('duplicate');
    expect(a.run_id).not.toBe(b.run_id);
  });

  it('is refused with 400 naming the header for a key that is empty, too long or not visible ASCII', async () => {
    for (const key of ['', 'k'.repeat(201), 'k'.repeat(256), 'has space', 'tab\there', 'é', '日本', 'a\u007f']) {
      let response: Response;
      try {
        response = await start('greet', key);
      } catch {
        continue; // a header value fetch itself refuses never reaches the Worker
      }
      expect(response.status, JSON.stringify(key)).toBe(400);
      const error = ((await response.json()) as { error: { message: string; field: string } }).error;
      expect(error.field).toBe('Idempotency-Key');
      expect(error.message).toMatch(/^Idempotency-Key /);
    }
    const long = await start('greet', 'k'.repeat(201));
    expect(((await long.json()) as { error: { message: string } }).error.message).toBe('Idempotency-Key is 201 characters long; it takes at most 200');
    expect((await start('greet', 'k'.repeat(200))).status).toBe(202);
  });
});
