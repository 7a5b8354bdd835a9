/**
 * Tasks in the Worker: a run whose task waits on an operator ask while another task goes
 * on, suspended and resumed with tasks in flight; a fanout whose arms each ask once, answered
 * in another order than asked; a task cancelled while it waits on an ask. After an eviction
 * (or a crash right after any journal entry) the run ends with the same result and events as
 * an undisturbed run, performing no effect twice. A task that computes at length (paused by
 * the Engine every million instructions) while another waits on an ask keeps the run running.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { DoStorage } from '../../src/worker/platform-types.ts';
import { RunState } from '../../src/worker/run-object/run-state.ts';
import type { PendingAsk, StreamEvent } from '../../src/worker/run-object/run-view.ts';
import type { RunView } from './app/client.ts';
import { call, getRun, json, kvRecord, testEnv, untilServed, untimed } from './app/client.ts';
import { ARM_ASKS, CANCEL_ASK, SPIN_ASK, TASKS } from './app/prompts.ts';
import { performedBy } from './app/test-host.ts';
import { armFault, dropObjects } from './app/test-worker.ts';

vi.setConfig({ testTimeout: 20_000 });

beforeAll(async () => {
  for (const [name, body] of [
    ['tasks', TASKS],
    ['arm-asks', ARM_ASKS],
    ['cancel-ask', CANCEL_ASK],
    ['spin-ask', SPIN_ASK],
  ] as const) {
    await json(await call('PUT', `/prompts/${name}`, { body }), 201);
  }
});

/** What a finished run left: its view, its events (from its KV record), its effects, its files. */
interface Finished {
  view: RunView;
  events: StreamEvent[];
  /** Tool calls and model rounds performed, asks left out: a replay asks again, answered from storage. */
  performed: string[];
  files: Record<string, string>;
}

async function finished(runId: string): Promise<Finished> {
  const view = await getRun(runId);
  const record = await kvRecord<{ events: StreamEvent[]; files: string[] }>(runId);
  const files: Record<string, string> = {};
  for (const path of record.files) files[path] = await (await call('GET', `/runs/${runId}/files/${path}`)).text();
  const performed = performedBy(runId).filter((line) => !line.startsWith('user-input/ask '));
  return { view, events: untimed(record.events), performed, files };
}

/** Starts a run of `prompt`; its view once it is no longer running (`?wait=`). */
async function start(prompt: string, seed: string): Promise<RunView> {
  return json<RunView>(await call('POST', `/prompts/${prompt}/runs?wait=10`, { body: { seed } }), 200);
}

/** Answers an ask with its own token (whose response shows that ask alone); the run's view once it is no longer running. */
async function answer(runId: string, ask: PendingAsk, text: string): Promise<RunView> {
  const answered = await json<{ ask: { ask_id: string; status: string } }>(
    await call('POST', `/runs/${runId}/asks/${ask.ask_id}?wait=10`, { body: { answer: text }, token: ask.token }),
    200,
  );
  expect(answered.ask).toMatchObject({ ask_id: ask.ask_id, status: 'answered' });
  return untilServed(runId);
}

const pendingAsk = (view: RunView, askId: string): PendingAsk => {
  const ask = view.pending.find((pending) => pending.ask_id === askId);
  if (!ask) throw new Error(`no pending ask ${askId} in ${JSON.stringify(view.pending)}`);
  return ask;
};

const stubOf = (runId: string) => testEnv.RUNS.get(testEnv.RUNS.idFromString(runId)) as unknown as object;

/** The chains of the journal entries the run object holds (effects, and the scheduler's step records under `scheduler`). */
const journalChains = (runId: string): Promise<string[]> =>
  runInDurableObject(stubOf(runId), (_instance: unknown, state: { storage: DoStorage }) => new RunState(state.storage).journal().map((entry) => entry.chain));

/** Answers each pending ask from `answers` (by ask id) until the run ends, sending again an answer lost to a fault. */
async function driveThroughFaults(runId: string, answers: Record<string, string>): Promise<RunView> {
  for (;;) {
    const view = await untilServed(runId);
    if (view.status !== 'suspended') return view;
    const ask = view.pending[0]!;
    await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: answers[ask.ask_id] }, token: ask.token });
  }
}

/** Each event as `type task`, such as `task_completed 0.1` (`run_suspended` has no task). */
const types = (events: StreamEvent[]) =>
  events.map((event) => `${event.type}${event.task !== undefined && event.task !== null ? ` ${String(event.task)}` : ''}`);

/**
 * The journal entries of a TASKS run: the 6 effects of task 0.1, a scheduler step record for
 * each of the 7 steps that left task 0.0 waiting on its ask, then the ask's answer and a
 * store.write of task 0.0, and the 3 store effects of the main chain.
 */
const TASKS_JOURNAL = 18;
const TASKS_STEP_RECORDS = 7;

describe('a run whose task waits on an operator ask while another task goes on', () => {
  let runId: string;
  let waiting: RunView;
  let baseline: Finished;

  beforeAll(async () => {
    waiting = await start('tasks', 'tasks');
    runId = waiting.run_id;
  });

  it('suspends only once the other task has finished, with the ask of task 0.0 pending as 0.0-1', async () => {
    expect(waiting.status).toBe('suspended');
    expect(waiting.pending).toEqual([
      expect.objectContaining({
        kind: 'ask',
        ask_id: '0.0-1',
        task: '0.0',
        question: 'Who owns the launch?',
        asked_at: expect.any(String),
        token: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);
    // Task 0.1 did all its work while task 0.0 waited: its tool calls, its model round, its files.
    expect(performedBy(runId)).toEqual(['user-input/ask Who owns the launch?', 'counter/tick w1', 'counter/tick w2', 'model.round Work: tick-w1 tick-w2']);
    expect(await (await call('GET', `/runs/${runId}/files/log.txt`)).text()).toBe('work\ntick-w1\ntick-w2\n');
    expect((await call('GET', `/runs/${runId}/files/owner.txt`)).status).toBe(404);
  });

  it('completes on the answer, and its events show task 0.1 ending before the run suspends, once', async () => {
    const done = await answer(runId, waiting.pending[0]!, 'Ada');
    expect(done).toMatchObject({ status: 'completed', pending: [], error: null });
    expect(done.result).toMatch(/^noted\(Work: tick-w1 tick-w2\)\|Ada\|owner Ada\|work;tick-w1;tick-w2;main Ada;\|\d+$/);
    baseline = await finished(runId);
    expect(baseline.performed).toEqual(['counter/tick w1', 'counter/tick w2', 'model.round Work: tick-w1 tick-w2']);
    expect(baseline.files).toEqual({ 'log.txt': 'work\ntick-w1\ntick-w2\nmain Ada\n', 'owner.txt': 'owner Ada' });
    const seen = types(baseline.events);
    expect(seen.filter((type) => type === 'run_suspended' || type === 'run_resumed')).toEqual(['run_suspended', 'run_resumed']);
    expect(seen.indexOf('ask_pending 0.0')).toBeLessThan(seen.indexOf('task_completed 0.1'));
    expect(seen.indexOf('task_completed 0.1')).toBeLessThan(seen.indexOf('run_suspended'));
    expect(seen.indexOf('run_resumed')).toBeLessThan(seen.indexOf('task_completed 0.0'));
    const chains = await journalChains(runId);
    expect(chains).toHaveLength(TASKS_JOURNAL);
    expect(chains.filter((chain) => chain === 'scheduler')).toHaveLength(TASKS_STEP_RECORDS);
  });

  it('resumes by replay after an eviction while the task waits, to the same result and events', async () => {
    const other = await start('tasks', 'tasks');
    await dropObjects();
    expect(await getRun(other.run_id)).toEqual(other);
    const done = await answer(other.run_id, other.pending[0]!, 'Ada');
    expect(done.status).toBe('completed');
    const after = await finished(other.run_id);
    expect(after.view.result).toBe(baseline.view.result);
    expect(after.events).toEqual(baseline.events);
    expect(after.performed).toEqual(baseline.performed);
    expect(after.files).toEqual(baseline.files);
  });

  describe('the fault matrix: memory dropped right after each journal entry, with tasks in flight', () => {
    for (let entry = 1; entry <= TASKS_JOURNAL; entry++) {
      it(`after entry ${entry}: same result, same events, no effect performed twice`, async () => {
        const fault = armFault(entry);
        const started = await json<{ run_id: string }>(await call('POST', '/prompts/tasks/runs', { body: { seed: 'tasks' } }), 202);
        const dropped = fault.then(() => dropObjects());
        await driveThroughFaults(started.run_id, { '0.0-1': 'Ada' });
        await dropped;
        const after = await finished(started.run_id);
        expect(after.view.status).toBe('completed');
        expect(after.view.result).toBe(baseline.view.result);
        expect(after.events).toEqual(baseline.events);
        expect(after.performed).toEqual(baseline.performed);
        expect(after.files).toEqual(baseline.files);
      });
    }
  });
});

describe('a fanout whose arms each ask once, answered in another order than asked', () => {
  const ORDER = [
    ['0.f0.3-1', 'yellow'],
    ['0.f0.1-1', 'blue'],
    ['0.f0.2-1', 'green'],
  ] as const;
  const RESULT = 'sky=blue,grass=green,sun=yellow|colours/grass.txt,colours/sky.txt,colours/sun.txt';
  let baseline: Finished;

  /** Answers the asks in ORDER, dropping the objects before each answer when `evict`; the views after each. */
  async function answerAll(evict: boolean): Promise<{ runId: string; views: RunView[] }> {
    let view = await start('arm-asks', 'arms');
    const views = [view];
    for (const [askId, text] of ORDER) {
      if (evict) await dropObjects();
      view = await answer(view.run_id, pendingAsk(view, askId), text);
      views.push(view);
    }
    return { runId: view.run_id, views };
  }

  it("lists every arm's ask, in the order asked, and takes the answers in any order", async () => {
    const { runId, views } = await answerAll(false);
    expect(views[0]!.status).toBe('suspended');
    expect(views[0]!.pending.map(({ ask_id, question }) => [ask_id, question])).toEqual([
      ['0.f0.1-1', 'Colour of the sky?'],
      ['0.f0.2-1', 'Colour of the grass?'],
      ['0.f0.3-1', 'Colour of the sun?'],
    ]);
    expect(new Set(views[0]!.pending.map((ask) => ask.token)).size).toBe(3);
    expect(views.slice(1).map((view) => [view.status, view.pending.map((ask) => ask.ask_id)])).toEqual([
      ['suspended', ['0.f0.1-1', '0.f0.2-1']],
      ['suspended', ['0.f0.2-1']],
      ['completed', []],
    ]);
    expect(views[3]!.result).toBe(RESULT);
    baseline = await finished(runId);
    expect(baseline.performed).toEqual(['counter/tick after']);
    expect(baseline.files).toEqual({ 'colours/grass.txt': 'green', 'colours/sky.txt': 'blue', 'colours/sun.txt': 'yellow' });
    // Each answer resumes the run, and it suspends again until the last.
    expect(types(baseline.events).filter((type) => type === 'run_suspended' || type === 'run_resumed')).toEqual([
      'run_suspended',
      'run_resumed',
      'run_suspended',
      'run_resumed',
      'run_suspended',
      'run_resumed',
    ]);
  });

  it("refuses one arm's ask token on another arm's ask (401)", async () => {
    const view = await start('arm-asks', 'arms');
    const refused = await call('POST', `/runs/${view.run_id}/asks/0.f0.1-1`, { body: { answer: 'x' }, token: pendingAsk(view, '0.f0.2-1').token });
    expect(refused.status).toBe(401);
    expect(await getRun(view.run_id)).toEqual(view);
    // Cancelling the run closes all three asks.
    expect(await json<RunView>(await call('POST', `/runs/${view.run_id}/cancel`), 200)).toMatchObject({ status: 'cancelled', pending: [] });
  });

  it('evicted before each answer, ends with the same views, result and events', async () => {
    const { runId, views } = await answerAll(true);
    expect(views.map((view) => [view.status, view.pending.map((ask) => ask.ask_id)])).toEqual([
      ['suspended', ['0.f0.1-1', '0.f0.2-1', '0.f0.3-1']],
      ['suspended', ['0.f0.1-1', '0.f0.2-1']],
      ['suspended', ['0.f0.2-1']],
      ['completed', []],
    ]);
    const after = await finished(runId);
    expect(after.view.result).toBe(RESULT);
    expect(after.events).toEqual(baseline.events);
    expect(after.performed).toEqual(baseline.performed);
    expect(after.files).toEqual(baseline.files);
  });
});

describe('a task cancelled while it waits on an ask', () => {
  let baseline: Finished;

  it('closes its ask (an answer gets 409), and the run goes on to its own ask', async () => {
    const view = await start('cancel-ask', 'cancel');
    expect(view.status).toBe('suspended');
    expect(view.pending.map(({ ask_id, question }) => [ask_id, question])).toEqual([['0-1', 'Go on?']]);
    const stale = await call('POST', `/runs/${view.run_id}/asks/0.0-1`, { body: { answer: 'late' } });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: { message: string } }).error.message).toBe(
      'ask 0.0-1 is no longer pending: the task that asked was cancelled, so the answer is stale',
    );
    const done = await answer(view.run_id, view.pending[0]!, 'yes');
    expect(done).toMatchObject({ status: 'completed', result: 'tick-t|cancelled|yes' });
    baseline = await finished(view.run_id);
    expect(types(baseline.events)).toContain('task_cancelled 0.0');
  });

  it('evicted while the main chain waits, ends with the same result and events', async () => {
    const view = await start('cancel-ask', 'cancel');
    await dropObjects();
    const done = await answer(view.run_id, view.pending[0]!, 'yes');
    expect(done.result).toBe('tick-t|cancelled|yes');
    const after = await finished(view.run_id);
    expect(after.events).toEqual(baseline.events);
    expect(after.performed).toEqual(baseline.performed);
  });
});

describe('a run whose task waits on an ask while another task computes at length', () => {
  it('is not suspended while the other task computes (paused by the Engine, the event loop running) nor while its tool call is in flight', async () => {
    const view = await start('spin-ask', 'spin');
    expect(view.status).toBe('suspended');
    expect(view.pending.map(({ ask_id, question }) => [ask_id, question])).toEqual([['0.0-1', 'Proceed?']]);
    // By the time the run reads as suspended, task 0.1 has done all its work.
    expect(performedBy(view.run_id)).toEqual(['user-input/ask Proceed?', 'counter/tick spun']);
    expect(await (await call('GET', `/runs/${view.run_id}/files/spun.txt`)).text()).toBe('15');
    const done = await answer(view.run_id, view.pending[0]!, 'yes');
    expect(done).toMatchObject({ status: 'completed', result: 'tick-spun 15|yes' });
    const seen = types((await finished(view.run_id)).events);
    // The ask was pending while task 0.1 computed, and the run suspended once, after 0.1 ended.
    expect(seen.indexOf('ask_pending 0.0')).toBeLessThan(seen.indexOf('task_completed 0.1'));
    expect(seen.filter((type) => type === 'run_suspended' || type === 'run_resumed')).toEqual(['run_suspended', 'run_resumed']);
    expect(seen.indexOf('task_completed 0.1')).toBeLessThan(seen.indexOf('run_suspended'));
  });
});
