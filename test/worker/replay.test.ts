/**
 * No run is lost when its object's memory is dropped: after an eviction or a crash the run
 * resumes by replay of its journal, and ends with the same result and the same events as
 * an undisturbed run, performing no effect twice. The fault matrix drops the memory right
 * after each effect of the DESK prompt is journaled.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { StreamEvent } from '../../src/worker/run-object/run-view.ts';
import type { RunView } from './app/client.ts';
import { call, drive, getRun, json, kvRecord, settled, testEnv, untilServed, untimed } from './app/client.ts';
import { DESK, DESK_EFFECTS } from './app/prompts.ts';
import { performedBy } from './app/test-host.ts';
import { armFault, dropObjects, openVms } from './app/test-worker.ts';

const ANSWERS = ['Ada', 'Friday'];

vi.setConfig({ testTimeout: 20_000 });

/**
 * Tool calls and model rounds performed. An ask is left out: it is journaled only when
 * answered, so a replay asks again, and the run object answers from the stored answer
 * without asking anyone (the events show no second ask_pending).
 */
const effectsOf = (runId: string) => performedBy(runId).filter((line) => !line.startsWith('user-input/ask '));

interface Finished {
  view: RunView;
  events: StreamEvent[];
  performed: string[];
  log: string;
}

const stubOf = (runId: string) => testEnv.RUNS.get(testEnv.RUNS.idFromString(runId)) as unknown as object;

async function start(): Promise<string> {
  return (await json<{ run_id: string }>(await call('POST', '/prompts/desk/runs', { body: { args: { topic: 'the app' }, seed: 'replay' } }), 202)).run_id;
}

/** What a finished run left: its view, its events (from its KV record), its effects, its file. */
async function finished(runId: string): Promise<Finished> {
  const view = await getRun(runId);
  const record = await kvRecord<{ events: StreamEvent[] }>(runId);
  const log = await (await call('GET', `/runs/${runId}/files/log.txt`)).text();
  return { view, events: untimed(record.events), performed: effectsOf(runId), log };
}

/** Like drive(), but an answer whose response was lost to the fault is sent again. */
async function driveThroughFaults(runId: string): Promise<RunView> {
  const answers = new Map([
    ['0-3', ANSWERS[0]!],
    ['0-5', ANSWERS[1]!],
  ]);
  for (;;) {
    const view = await untilServed(runId);
    if (view.status !== 'suspended') return view;
    const ask = view.pending[0]!;
    await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: answers.get(ask.ask_id) }, token: ask.token });
  }
}

let baseline: Finished;

beforeAll(async () => {
  await call('PUT', '/prompts/desk', { body: DESK });
  const runId = await start();
  await drive(runId, ANSWERS);
  baseline = await finished(runId);
});

describe('the undisturbed run', () => {
  it('completes, its tool calls and model round performed once each', () => {
    expect(baseline.view.status).toBe('completed');
    expect(baseline.performed).toEqual(['counter/tick first', 'model.round Note: Ada ships Friday', 'counter/tick second']);
    expect(baseline.log).toBe('start\nowner Ada\ndate Friday\n');
    expect(baseline.events.map((e) => e.type)).toContain('run_resumed');
  });
});

describe('a run whose object is evicted while it waits on an ask', () => {
  it('resumes by replay when the answer comes, and ends as the undisturbed run did', async () => {
    const runId = await start();
    const waiting = await settled(runId);
    expect(waiting.pending[0]?.ask_id).toBe('0-3');
    await dropObjects();
    expect(await getRun(runId)).toEqual(waiting);
    await drive(runId, ANSWERS);
    const after = await finished(runId);
    expect(after.view.result).toBe(baseline.view.result);
    expect(after.events).toEqual(baseline.events);
    expect(after.performed).toEqual(baseline.performed);
    expect(after.log).toBe(baseline.log);
    // The VM the dropped object left waiting was closed when the run came back.
    expect(await openVms()).toBe(0);
  });
});

describe('a run whose object is dropped while it runs', () => {
  it('is resumed by the alarm, with no other request', async () => {
    const fault = armFault(2);
    const runId = await start();
    await fault;
    await outboxQuiet(runId);
    await dropObjects();
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const view = await settledWithoutWaking(runId);
    expect(view.pending[0]?.ask_id).toBe('0-3');
    await drive(runId, ANSWERS);
    expect((await finished(runId)).events).toEqual(baseline.events);
  });
});

/**
 * Waits until the run's outbox owes no index rows and its alarm is set: the alarm that
 * delivers them is not running when the object is dropped (a running alarm has none set).
 */
async function outboxQuiet(runId: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [alarm, owed] = await runInDurableObject(
      stubOf(runId),
      async (_instance: unknown, state: { storage: { kv: { get(key: string): unknown }; getAlarm(): Promise<number | null> } }) => [
        await state.storage.getAlarm(),
        state.storage.kv.get('outbox-index'),
      ],
    );
    if (alarm !== null && owed === undefined) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${runId}'s outbox never settled`);
}

/** Waits for the run to suspend by reading its storage, without a request that would wake it. */
async function settledWithoutWaking(runId: string): Promise<RunView> {
  for (let i = 0; i < 500; i++) {
    const status = await runInDurableObject(
      stubOf(runId),
      (_instance: unknown, state: { storage: { kv: { get(key: string): { status: string } } } }) => state.storage.kv.get('progress').status,
    );
    if (status !== 'running') return getRun(runId);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the alarm did not resume the run');
}

describe('the fault matrix: memory dropped right after each journaled effect', () => {
  for (let effect = 1; effect <= DESK_EFFECTS; effect++) {
    it(`after effect ${effect}: same result, same events, no effect performed twice`, async () => {
      const fault = armFault(effect);
      const runId = await start();
      const dropped = fault.then(() => dropObjects());
      await driveThroughFaults(runId);
      await dropped;
      const after = await finished(runId);
      expect(after.view.status).toBe('completed');
      expect(after.view.result).toBe(baseline.view.result);
      expect(after.events).toEqual(baseline.events);
      expect(after.performed).toEqual(baseline.performed);
      expect(after.log).toBe(baseline.log);
      expect(await openVms()).toBe(0);
    });
  }
});
