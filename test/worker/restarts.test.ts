/**
 * A running run whose execution dies (a crash, a restart, Cloudflare's CPU limit) is picked
 * up by its alarm within a few seconds, with no request to wake it; and a run whose every
 * execution dies at the same point ends with Limit after a few tries instead of being
 * replayed for ever.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunView } from '../../src/worker/run-object/run-view.ts';
import { MAX_DEATHS_WITHOUT_PROGRESS, WATCHDOG_MS } from '../../src/worker/run-object/run-alarm.ts';
import { call, json, kvRecord, testEnv, untilServed } from './app/client.ts';
import { performedBy } from './app/test-host.ts';
import { armFault, dropObjects } from './app/test-worker.ts';

vi.setConfig({ testTimeout: 30_000 });

const prompt = (name: string, lua: string) => `---
name: ${name}
description: A test prompt.
runvil: 0
uses: [acme/counter]
---
# ${name}

## Go
\`\`\`lua
${lua}
\`\`\`
`;

/** Four tool calls that each take a moment. */
const STEPS = prompt(
  'steps',
  `local out = {}
for i = 1, 4 do out[i] = tools.call('counter/tick', { label = 'step' .. i, wait_ms = 50 }) end
return table.concat(out, ',')`,
);

/** One tool call, then one that never answers: its every execution dies waiting there, as one the CPU limit kills at the same point would. */
const STUCK = prompt(
  'stuck',
  `tools.call('counter/tick', { label = 'before' })
return tools.call('counter/tick', { label = 'stuck', wait_ms = 1e9 })`,
);

const stubOf = (runId: string) => testEnv.RUNS.get(testEnv.RUNS.idFromString(runId));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the run's storage holds, read without a request that would wake the run. */
async function stored(runId: string): Promise<{ progress: { status: string; deaths?: number; ended_at: string | null }; alarm: number | null }> {
  return runInDurableObject(
    stubOf(runId),
    async (_instance: unknown, state: { storage: { kv: { get(key: string): any }; getAlarm(): Promise<number | null> } }) => ({
      progress: state.storage.kv.get('progress'),
      alarm: await state.storage.getAlarm(),
    }),
  );
}

async function start(name: string): Promise<string> {
  return (await json<{ run_id: string }>(await call('POST', `/prompts/${name}/runs`, { body: {} }), 202)).run_id;
}

/** Waits until `runId` has performed `count` tool calls. */
async function performedCount(runId: string, count: number): Promise<void> {
  for (let i = 0; i < 1000 && performedBy(runId).length < count; i++) await sleep(10);
  expect(performedBy(runId)).toHaveLength(count);
}

/** Sends GET /runs/:id until the new object answers (the dropped one fails the first). */
async function viewAfterDrop(runId: string): Promise<RunView> {
  for (let i = 0; i < 100; i++) {
    const response = await call('GET', `/runs/${runId}`);
    if (response.status === 200) return (await response.json()) as RunView;
    await sleep(10);
  }
  throw new Error('the run object never answered');
}

/** The run's KV record, polled for up to `ms` (KV only: nothing that would wake the run). */
async function recordWithin<T>(runId: string, ms: number): Promise<T> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(20)) {
    const text = await testEnv.RUNVIL_KV.get(`runs/${runId}/record`);
    if (text !== null) return JSON.parse(text) as T;
  }
  throw new Error(`run ${runId} has no record in KV after ${ms} ms`);
}

beforeAll(async () => {
  await json(await call('PUT', '/prompts/steps', { body: STEPS }), 201);
  await json(await call('PUT', '/prompts/stuck', { body: STUCK }), 201);
});

describe('the alarm of a running run', () => {
  it(`is never more than ${WATCHDOG_MS} ms ahead while the run runs`, async () => {
    const runId = await start('stuck');
    await performedCount(runId, 2);
    for (let i = 0; i < 3; i++) {
      const { progress, alarm } = await stored(runId);
      expect(progress.status).toBe('running');
      expect(alarm! - Date.now()).toBeLessThanOrEqual(WATCHDOG_MS);
      await sleep(WATCHDOG_MS / 2);
    }
    await call('POST', `/runs/${runId}/cancel`, { body: {} });
  });

  it('resumes a run whose object died while it ran, by its alarm, with no request', async () => {
    const fault = armFault(2);
    const runId = await start('steps');
    await fault;
    await dropObjects();
    // Only KV is read until the run has ended: the run object's alarm alone resumes it.
    const record = await recordWithin<{ status: string; result: string }>(runId, 30_000);
    expect(record).toMatchObject({ status: 'completed', result: 'tick-step1,tick-step2,tick-step3,tick-step4' });
    expect(performedBy(runId)).toEqual(['counter/tick step1', 'counter/tick step2', 'counter/tick step3', 'counter/tick step4']);
  });
});

describe('a run whose executions keep dying', () => {
  it(`ends with Limit at the ${MAX_DEATHS_WITHOUT_PROGRESS}rd death in a row with nothing new journaled, naming the CPU limit`, async () => {
    const runId = await start('stuck');
    await performedCount(runId, 2);
    for (let death = 1; death < MAX_DEATHS_WITHOUT_PROGRESS; death++) {
      await dropObjects();
      expect(await viewAfterDrop(runId)).toMatchObject({ status: 'running' });
      // The replay answered `before` from the journal and is stuck on `stuck` again.
      await performedCount(runId, 2 + death);
      expect((await stored(runId)).progress.deaths).toBe(death);
    }
    await dropObjects();
    const failed = await viewAfterDrop(runId);
    expect(failed).toMatchObject({ status: 'failed', error: { kind: 'Limit' } });
    expect(failed.error!.message).toContain(`stopped ${MAX_DEATHS_WITHOUT_PROGRESS} times in a row`);
    expect(failed.error!.message).toContain('limits.cpu_ms');
    // Not replayed again: the stuck call was tried once per execution.
    expect(performedBy(runId).filter((line) => line.endsWith('stuck'))).toHaveLength(MAX_DEATHS_WITHOUT_PROGRESS);
    const record = await kvRecord<{ status: string; error: { kind: string } }>(runId);
    expect(record).toMatchObject({ status: 'failed', error: { kind: 'Limit' } });
  });

  it('goes on as long as each execution journals something new before it dies', async () => {
    const runId = await start('steps');
    // Dropped right after each of its four tool calls is journaled: four deaths, each after progress.
    for (let entry = 1; entry <= 4; entry++) {
      const fault = armFault(entry);
      if (entry > 1) await viewAfterDrop(runId);
      await fault;
      await dropObjects();
    }
    const done = await untilServed(runId);
    expect(done).toMatchObject({ status: 'completed', result: 'tick-step1,tick-step2,tick-step3,tick-step4' });
    expect(performedBy(runId)).toHaveLength(4);
  });

  it('does not count a suspended run evicted while it waits, nor a cancelled one', async () => {
    const runId = await start('stuck');
    await performedCount(runId, 2);
    await call('POST', `/runs/${runId}/cancel`, { body: {} });
    for (let i = 0; i < MAX_DEATHS_WITHOUT_PROGRESS + 1; i++) {
      await dropObjects();
      expect(await viewAfterDrop(runId)).toMatchObject({ status: 'cancelled', error: { kind: 'Cancelled' } });
    }
    expect((await stored(runId)).progress.deaths ?? 0).toBe(0);
  });
});
