/**
 * Writing a finished run to KV within Cloudflare's 1,000 KV operations per invocation: a run
 * with 1,200 files is written over several alarm invocations, at most KV_OPS_PER_ALARM
 * writes each, its record last. A write that fails is retried from where it stopped, and an
 * invocation run again with its progress lost writes the same keys again, to the same end.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { KV_OPS_PER_ALARM } from '../../src/worker/outbox/kv-sync.ts';
import type { RunProgress } from '../../src/worker/run-object/run-state.ts';
import { KvRunStore, kvKeys } from '../../src/worker/outbox/run-store-kv.ts';
import type { RunView } from '../../src/worker/run-object/run-view.ts';
import { call, json, testEnv } from './app/client.ts';
import { MANY_FILES, MANY_FILES_COUNT } from './app/prompts.ts';
import { alarmKv, dropObjects, failKvPut, type AlarmKvOps } from './app/test-worker.ts';

vi.setConfig({ testTimeout: 60_000 });

/** Cloudflare's limit of KV operations (subrequests) per invocation. */
const CLOUDFLARE_KV_OPS = 1000;

const stubOf = (runId: string) => testEnv.RUNS.get(testEnv.RUNS.idFromString(runId)) as unknown as object;

interface ObjectState {
  storage: { kv: { get(key: string): any; put(key: string, value: unknown): void }; getAlarm(): Promise<number | null>; setAlarm(at: number): Promise<void> };
}

const progressOf = (runId: string): Promise<RunProgress> =>
  runInDurableObject(stubOf(runId), (_instance: unknown, state: ObjectState) => state.storage.kv.get('progress') as RunProgress);

const alarmOf = (runId: string): Promise<number | null> =>
  runInDurableObject(stubOf(runId), (_instance: unknown, state: ObjectState) => state.storage.getAlarm());

/** Polls until `done()` gives a value (or 30 s pass). */
async function eventually<T>(what: string, done: () => T | undefined | Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 3000; i++) {
    const value = await done();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never: ${what}`);
}

/** The run's alarm invocations that made KV operations, once its progress says it is all in KV. */
async function synced(runId: string): Promise<AlarmKvOps[]> {
  await eventually('the run is in KV', async () => ((await progressOf(runId)).kv_synced ? true : undefined));
  return (alarmKv.get(runId) ?? []).filter((invocation) => invocation.ops.length > 0);
}

/** Starts a MANY_FILES run and waits for it to complete. */
async function manyFiles(seed: string): Promise<string> {
  const view = await json<RunView>(await call('POST', `/prompts/many-files/runs?wait=60`, { body: { seed } }), 200);
  expect(view).toMatchObject({ status: 'completed', result: `wrote ${MANY_FILES_COUNT}` });
  return view.run_id;
}

const fileName = (i: number) => `many/${String(i).padStart(4, '0')}.txt`;

/** Checks that KV holds the run's record, listing every file, and every file with its text. */
async function expectAllInKv(runId: string): Promise<void> {
  const record = JSON.parse((await testEnv.RUNVIL_KV.get(kvKeys.record(runId)))!) as { status: string; files: string[]; events: unknown[] };
  expect(record.status).toBe('completed');
  expect(record.files).toEqual(Array.from({ length: MANY_FILES_COUNT }, (_, i) => fileName(i + 1)));
  const store = new KvRunStore(testEnv.RUNVIL_KV, runId);
  expect(await store.list('many/')).toEqual(record.files);
  // The first and last file of each batch, and a few between.
  for (const i of [1, 2, 499, 500, 501, 700, 999, 1000, 1001, 1199, 1200]) expect(await store.read(fileName(i))).toBe(`file ${i}`);
}

/** Each invocation's operations are KV writes, within the bound. */
function expectWithinBound(invocations: AlarmKvOps[]): void {
  for (const { ops } of invocations) {
    expect(ops.length).toBeLessThanOrEqual(KV_OPS_PER_ALARM);
    expect(ops.every((op) => op.startsWith('put '))).toBe(true);
  }
  expect(KV_OPS_PER_ALARM).toBeLessThan(CLOUDFLARE_KV_OPS);
}

beforeAll(async () => {
  await json(await call('PUT', '/prompts/many-files', { body: MANY_FILES }), 201);
});

describe('a finished run with more files than one invocation may write to KV', () => {
  it(`is written over alarm invocations of at most ${KV_OPS_PER_ALARM} writes each, every file once, the record last`, async () => {
    const runId = await manyFiles('many');
    const invocations = await synced(runId);
    expectWithinBound(invocations);
    // 1,200 files and the record: 500, 500, then the last 200 files and the record.
    expect(invocations.map(({ ops }) => ops.length)).toEqual([500, 500, 201]);
    const puts = invocations.flatMap(({ ops }) => ops);
    expect(new Set(puts).size).toBe(MANY_FILES_COUNT + 1);
    expect(puts.at(-1)).toBe(`put ${kvKeys.record(runId)}`);
    expect(puts.indexOf(`put ${kvKeys.record(runId)}`)).toBe(MANY_FILES_COUNT);
    await expectAllInKv(runId);
    expect(await progressOf(runId)).toMatchObject({ kv_synced: true, kv_files: MANY_FILES_COUNT });
    // Done: no alarm is left, and an alarm run again finds nothing to do.
    expect(await alarmOf(runId)).toBeNull();
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(false);
  });

  it('goes on from the write that failed when the alarm runs again, and writes the same keys again if its progress was lost', async () => {
    failKvPut(700);
    const runId = await manyFiles('failing');
    // The second invocation writes 199 files; the 200th write fails, and the alarm is set to retry.
    const failed = await eventually('a write fails', () => (alarmKv.get(runId)?.some((invocation) => invocation.failed) ? true : undefined));
    expect(failed).toBe(true);
    expect((alarmKv.get(runId) ?? []).filter((invocation) => invocation.ops.length > 0).map(({ ops }) => ops.length)).toEqual([500, 200]);
    expect(await progressOf(runId)).toMatchObject({ kv_synced: false, kv_files: 699 });
    expect(await testEnv.RUNVIL_KV.get(kvKeys.record(runId))).toBeNull();
    expect(await alarmOf(runId)).toBeGreaterThan(Date.now());
    // The retry, now rather than in 10 s: from file 700 on, 500 files, then the last one and the record.
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const invocations = await synced(runId);
    expectWithinBound(invocations);
    expect(invocations.map(({ ops }) => ops.length)).toEqual([500, 200, 500, 2]);
    const puts = invocations.flatMap(({ ops }) => ops);
    expect(puts.filter((op) => op === `put ${kvKeys.file(runId, fileName(700))}`)).toHaveLength(2);
    expect(new Set(puts).size).toBe(MANY_FILES_COUNT + 1);
    expect(puts.at(-1)).toBe(`put ${kvKeys.record(runId)}`);
    await expectAllInKv(runId);
    const record = await testEnv.RUNVIL_KV.get(kvKeys.record(runId));

    // An invocation whose progress was lost (its object crashed before storing it) runs
    // again: it writes the same files and record again, within the bound, to the same end.
    await runInDurableObject(stubOf(runId), async (_instance: unknown, state: ObjectState) => {
      state.storage.kv.put('progress', { ...state.storage.kv.get('progress'), kv_synced: false, kv_files: 1000 });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    await dropObjects();
    alarmKv.delete(runId);
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const again = await synced(runId);
    expect(again.map(({ ops }) => ops.length)).toEqual([201]);
    await expectAllInKv(runId);
    expect(await testEnv.RUNVIL_KV.get(kvKeys.record(runId))).toBe(record);
  });
});
