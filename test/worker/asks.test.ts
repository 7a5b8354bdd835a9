/**
 * Operator asks in workerd: a run suspends with a pending ask that carries its own answer
 * token; an answer resumes it; a retry of the same answer is no error; a different, stale or
 * misdirected answer changes nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from './app/client.ts';
import { call, drive, getRun, json, settled } from './app/client.ts';
import { performedBy } from './app/test-host.ts';
import { DESK } from './app/prompts.ts';

beforeAll(async () => {
  await json(await call('PUT', '/prompts/desk', { body: DESK }), 201);
});

const start = async (): Promise<string> =>
  (await json<{ run_id: string }>(await call('POST', '/prompts/desk/runs', { body: { args: { topic: 'the app' }, seed: 's1' } }), 202)).run_id;
/** Answers an ask; `token` undefined sends the API token, null none. */
const answer = (runId: string, askId: string, text: string, token?: string | null) =>
  call('POST', `/runs/${runId}/asks/${askId}`, { body: { answer: text }, token });

describe('a run that asks the operator', () => {
  let runId: string;
  let first: RunView;

  beforeAll(async () => {
    runId = await start();
    first = await settled(runId);
  });

  it('suspends with the ask pending, its question, time and own token', () => {
    expect(first.status).toBe('suspended');
    expect(first.pending).toEqual([
      {
        kind: 'ask',
        ask_id: '0-3',
        run_id: runId,
        prompt: 'desk',
        task: '0',
        question: 'Who owns the app?',
        choices: null,
        form: null,
        asked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        expires_at: null,
        token: expect.stringMatching(/^[0-9a-f]{64}$/),
        answer_url: `https://runvil.test/runs/${runId}/asks/0-3`,
      },
    ]);
  });

  it("refuses an answer without credentials or with a token that is not the ask's (401), changing nothing", async () => {
    expect((await answer(runId, '0-3', 'Eve', null)).status).toBe(401);
    const refused = await answer(runId, '0-3', 'Eve', 'not-the-token');
    expect(refused.status).toBe(401);
    expect((await refused.json()) as object).toEqual({
      error: { message: 'wrong token: send the API token, or the answer token of this ask (an ask token answers its own ask only)' },
    });
    expect(await getRun(runId)).toEqual(first);
  });

  it("answers 404 for an unknown ask or run to the API token, and 401 to the ask's token, which opens no other", async () => {
    expect((await answer(runId, '0-99', 'x')).status).toBe(404);
    expect((await answer('f'.repeat(64), '0-3', 'x')).status).toBe(404);
    expect((await answer('nope', '0-3', 'x')).status).toBe(404);
    expect((await answer(runId, '0-99', 'x', first.pending[0]!.token!)).status).toBe(401);
    expect((await answer('f'.repeat(64), '0-3', 'x', first.pending[0]!.token!)).status).toBe(401);
    expect((await answer('nope', '0-3', 'x', first.pending[0]!.token!)).status).toBe(401);
    expect(await getRun(runId)).toEqual(first);
  });

  it('resumes on the answer, sent with the ask token, and suspends on the second ask', async () => {
    expect(await json(await answer(runId, '0-3', 'Ada', first.pending[0]!.token), 200)).toEqual({
      ask: { ...first.pending[0], status: 'answered' },
      run: { run_id: runId, status: expect.stringMatching(/^(running|suspended)$/) },
    });
    const second = await settled(runId);
    expect(second.status).toBe('suspended');
    expect(second.pending).toEqual([expect.objectContaining({ ask_id: '0-5', question: 'When does it ship?' })]);
    expect(second.pending[0]!.token).not.toBe(first.pending[0]!.token);
  });

  it("takes the same answer again as a retry (200), refuses another with 409, and the first ask's token on the second ask with 401", async () => {
    const before = await getRun(runId);
    expect(await json(await answer(runId, '0-3', 'Ada', first.pending[0]!.token), 200)).toEqual({
      ask: { ...first.pending[0], status: 'answered' },
      run: { run_id: runId, status: 'suspended' },
    });
    const duplicate = await answer(runId, '0-3', 'Eve', first.pending[0]!.token);
    expect(duplicate.status).toBe(409);
    expect(((await duplicate.json()) as { error: { message: string } }).error.message).toMatch(/^ask 0-3 was already answered \(at .*\) with another answer/);
    expect((await answer(runId, '0-5', 'Friday', first.pending[0]!.token)).status).toBe(401);
    expect(await getRun(runId)).toEqual(before);
  });

  it('completes after the second answer (the API token answers too; ?wait= answers once the run ends)', async () => {
    const response = await call('POST', `/runs/${runId}/asks/0-5?wait=10`, { body: { answer: 'Friday' } });
    const done = await json<RunView>(response, 200);
    expect(done).toMatchObject({ status: 'completed', pending: [], error: null });
    expect(done.result).toMatch(/^Ada\|Friday\|tick-first\|noted\(Note: Ada ships Friday\)\|start;owner Ada;date Friday;\|\d+$/);
    expect(performedBy(runId)).toEqual([
      'counter/tick first',
      'user-input/ask Who owns the app?',
      'user-input/ask When does it ship?',
      'model.round Note: Ada ships Friday',
      'counter/tick second',
    ]);
  });

  it('refuses an answer to an answered ask, or to an ask of a run that has ended, with 409', async () => {
    const before = await getRun(runId);
    expect(await json(await answer(runId, '0-5', 'Friday'), 200)).toMatchObject({ status: 'completed' });
    const stale = await answer(runId, '0-5', 'Monday');
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { message: string } }).error.message).toMatch(/^ask 0-5 was already answered/);
    const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/desk/runs', { body: { seed: 's1' } }), 202);
    await settled(run_id);
    await json(await call('POST', `/runs/${run_id}/cancel`), 200);
    const closed = await answer(run_id, '0-3', 'late');
    expect(closed.status).toBe(409);
    expect(((await closed.json()) as { error: { message: string } }).error.message).toBe(
      'ask 0-3 is no longer pending: the run has ended (cancelled), so the answer is stale',
    );
    expect(await getRun(runId)).toEqual(before);
  });
});

describe('two runs of one prompt', () => {
  it('give the same result and events for the same seed and answers', async () => {
    const a = await start();
    const b = await start();
    const [doneA, doneB] = [await drive(a, ['Ada', 'Friday']), await drive(b, ['Ada', 'Friday'])];
    expect(doneA.result).toBe(doneB.result);
  });
});
