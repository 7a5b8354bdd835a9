/**
 * Each test file starts from the state a runtime of its own would give it, and leaves
 * nothing running. The suite's files share a few runtimes (vitest.workers.config.ts), one
 * file at a time in each; so before a file, what the file before left is taken away: every
 * Durable Object's data with KV's and D1's, and the objects themselves, ended where they
 * stand (the runs with them); then what the test Worker's modules hold (resetTestWorker in
 * test/worker/app/test-worker.ts); apply-migrations.ts then makes the index's tables again.
 * After a file, its objects are ended too: a run still waiting on a timer or an alarm when
 * the suite ends would keep the pool from ending.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { abortAllDurableObjects, reset } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll } from 'vitest';
import { resetTestWorker } from './app/test-worker.ts';

/**
 * Deletes every Durable Object's data, KV's and D1's among them, then ends the objects still
 * in memory. In this order: ended first, the objects' data outlived `reset()`.
 */
async function endObjects(): Promise<void> {
  await reset();
  await abortAllDurableObjects();
}

await endObjects();
// What every file assumes, checked where it is cheap: a file never sees another's runs or prompts.
const left = (await env.RUNVIL_KV.list({ limit: 1 })).keys;
if (left.length > 0) throw new Error(`fresh-state.ts: KV still holds ${left[0]!.name} after reset(): the file cannot start empty`);
await resetTestWorker();

afterAll(endObjects);
