/**
 * Ask tokens as credentials, tried as an operator who wants more than their own ask would:
 * a token answers its own ask of its own run and nothing else, the response to it shows that
 * ask and the run's status (never another ask's token, never the result), and every wrong
 * credential is refused with 401 by the Worker before the run object is asked anything.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { PendingAsk } from '../../src/worker/run-object/run-view.ts';
import type { RunView } from './app/client.ts';
import { API_TOKEN, call, getRun, json, until } from './app/client.ts';
import { ARM_ASKS, DESK } from './app/prompts.ts';

beforeAll(async () => {
  for (const [name, body] of [
    ['arm-asks', ARM_ASKS],
    ['desk', DESK],
  ] as const) {
    const response = await call('PUT', `/prompts/${name}`, { body });
    expect([200, 201]).toContain(response.status);
  }
});

const answer = (runId: string, askId: string, body: unknown, token?: string | null, query = '') =>
  call('POST', `/runs/${runId}/asks/${askId}${query}`, { body, token });

/** Starts a fanout run and waits until its three arms each wait on an ask. */
async function threeAsks(): Promise<{ runId: string; asks: PendingAsk[] }> {
  const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/arm-asks/runs', { body: { seed: 'fan' } }), 202);
  const view = await until(run_id, (v) => v.status === 'suspended' && v.pending.length === 3);
  return { runId: run_id, asks: view.pending as PendingAsk[] };
}

describe('a fanout whose three arms each ask an operator', () => {
  let runId: string;
  let asks: PendingAsk[];
  let other: { runId: string; asks: PendingAsk[] };

  beforeAll(async () => {
    ({ runId, asks } = await threeAsks());
    other = await threeAsks();
  });

  it('lists every ask with its own token and answer URL', () => {
    expect(asks.map((ask) => ask.ask_id)).toEqual(['0.f0.1-1', '0.f0.2-1', '0.f0.3-1']);
    expect(asks.map((ask) => ask.task)).toEqual(['0.f0.1', '0.f0.2', '0.f0.3']);
    expect(new Set(asks.map((ask) => ask.token)).size).toBe(3);
    for (const ask of asks) expect(ask.answer_url).toBe(`https://runvil.test/runs/${runId}/asks/${ask.ask_id}`);
    // The same ask id in another run has another token.
    expect(other.asks.map((ask) => ask.token)).not.toContain(asks[0]!.token);
  });

  it("refuses each operator's token on every other ask, of this run and of another, with 401, changing nothing", async () => {
    const before = await getRun(runId);
    for (const [i, ask] of asks.entries()) {
      for (const [j, target] of asks.entries()) {
        if (i === j) continue;
        expect((await answer(runId, target.ask_id, { answer: 'hijack' }, ask.token)).status).toBe(401);
      }
      // The token of run A's ask on the same ask id of run B, and B's on A.
      expect((await answer(other.runId, ask.ask_id, { answer: 'hijack' }, ask.token)).status).toBe(401);
      expect((await answer(runId, ask.ask_id, { answer: 'hijack' }, other.asks[i]!.token)).status).toBe(401);
      // Another route: an ask token is no API token.
      expect((await call('GET', `/runs/${runId}`, { token: ask.token })).status).toBe(401);
      expect((await call('GET', `/runs/${runId}/events`, { token: ask.token })).status).toBe(401);
      expect((await call('POST', `/runs/${runId}/cancel`, { token: ask.token })).status).toBe(401);
    }
    expect(await getRun(runId)).toEqual(before);
  });

  it('refuses tokens that are nearly right (one digit changed, upper case, cut, lengthened, the API token) with 401', async () => {
    const token = asks[0]!.token!;
    const flip = (t: string, at: number) => t.slice(0, at) + (t[at] === '0' ? '1' : '0') + t.slice(at + 1);
    const variants = [
      flip(token, 0),
      flip(token, 63),
      flip(token, 31),
      token.toUpperCase(),
      token.slice(0, 63),
      token + '0',
      token.slice(1) + token[0],
      `${token} ${token}`,
      `${API_TOKEN}x`,
      API_TOKEN.slice(0, -1),
      'x'.repeat(64),
      '0'.repeat(64),
      'Z'.repeat(5000),
    ];
    for (const variant of variants) {
      const response = await answer(runId, asks[0]!.ask_id, { answer: 'hijack' }, variant);
      expect(response.status, variant).toBe(401);
      expect(JSON.stringify(await response.json())).not.toContain(token);
    }
    expect((await getRun(runId)).pending).toHaveLength(3);
  });

  it("answers each operator with their own ask and the run's status: no other ask's token, no result", async () => {
    for (const [i, ask] of asks.entries()) {
      // The last answer ends the run; ?wait= lets the response come after the end.
      const response = await answer(runId, ask.ask_id, { answer: `c${i}`, answered_by: `operator ${i}` }, ask.token, '?wait=10');
      const text = await response.text();
      expect(response.status, text).toBe(200);
      const body = JSON.parse(text);
      expect(Object.keys(body).sort()).toEqual(['ask', 'run']);
      expect(body.ask).toEqual({ ...ask, status: 'answered' });
      expect(Object.keys(body.run).sort()).toEqual(['run_id', 'status']);
      expect(body.run.run_id).toBe(runId);
      for (const otherAsk of [...asks, ...other.asks]) if (otherAsk !== ask) expect(text).not.toContain(otherAsk.token);
      expect(text).not.toContain('sky=');
      expect(text).not.toContain('"result"');
    }
    const done = await until(runId, (v) => v.status === 'completed');
    expect(done.result).toBe('sky=c0,grass=c1,sun=c2|colours/grass.txt,colours/sky.txt,colours/sun.txt');
  });

  it("keeps answered_by in each ask's answered event", async () => {
    const text = await (await call('GET', `/runs/${runId}/events`)).text();
    const answered = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)))
      .filter((event) => event.type === 'ask_answered');
    expect(answered.map(({ ask_id, task, answered_by }) => ({ ask_id, task, answered_by }))).toEqual(
      asks.map((ask, i) => ({ ask_id: ask.ask_id, task: ask.task, answered_by: `operator ${i}` })),
    );
  });

  it('takes the same answer again with the same response, refuses another with 409, for the token and the API token alike', async () => {
    const ask = asks[1]!;
    const again = await json(await answer(runId, ask.ask_id, { answer: 'c1' }, ask.token), 200);
    expect(again).toEqual({ ask: { ...ask, status: 'answered' }, run: { run_id: runId, status: 'completed' } });
    expect(await json<RunView>(await answer(runId, ask.ask_id, { answer: 'c1' }), 200)).toMatchObject({
      run_id: runId,
      status: 'completed',
      result: expect.any(String),
    });
    for (const token of [ask.token, undefined]) {
      const refused = await answer(runId, ask.ask_id, { answer: 'c9' }, token);
      expect(refused.status).toBe(409);
      expect(await refused.json()).toEqual({
        error: { message: expect.stringMatching(/^ask 0\.f0\.2-1 was already answered \(at .*\) with another answer; an answer is taken once$/) },
      });
    }
  });
});

describe('an answer without a good credential', () => {
  it('gets the same 401 for a run that exists and one that does not, whatever the body (no existence oracle)', async () => {
    const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/desk/runs', { body: { seed: 's' } }), 202);
    await until(run_id, (v) => v.status === 'suspended');
    const missing = 'e'.repeat(64);
    for (const token of [null, 'wrong', 'f'.repeat(64)]) {
      for (const body of [{ answer: 'x' }, 'not json', [1], { answer: 7 }]) {
        const a = await answer(run_id, '0-3', body, token);
        const b = await answer(missing, '0-3', body, token);
        const c = await answer('nope', 'x', body, token);
        expect([a.status, b.status, c.status]).toEqual([401, 401, 401]);
        const [ta, tb, tc] = [await a.text(), await b.text(), await c.text()];
        expect(ta).toBe(tb);
        expect(tb).toBe(tc);
      }
    }
    expect((await getRun(run_id)).status).toBe('suspended');
  });
});

describe('answered_by', () => {
  let runId: string;
  let token: string;
  beforeAll(async () => {
    ({ run_id: runId } = await json<{ run_id: string }>(await call('POST', '/prompts/desk/runs', { body: { seed: 'by' } }), 202));
    token = (await until(runId, (v) => v.status === 'suspended')).pending[0]!.token!;
  });

  it('is refused with 400 naming it when it is not a string or longer than 200 characters, changing nothing', async () => {
    for (const by of [7, null, true, ['Ada'], { name: 'Ada' }, 'a'.repeat(201), '😀'.repeat(201)]) {
      const response = await answer(runId, '0-3', { answer: 'Ada', answered_by: by }, token);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { field: string } }).error.field).toBe('answered_by');
    }
    expect((await getRun(runId)).pending).toHaveLength(1);
  });

  it('takes 200 characters (counted as characters, not UTF-16 units)', async () => {
    expect((await answer(runId, '0-3', { answer: 'Ada', answered_by: '😀'.repeat(200) }, token)).status).toBe(200);
  });
});
