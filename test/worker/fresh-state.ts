/**
 * Each test file starts from the state a runtime of its own would give it, and leaves
 * nothing running. The suite's files share a few runtimes (vitest.workers.config.ts), one
 * file at a time in each; so before a file, what the file before left is taken away: every
 * Durable Object, ended where it stands (the runs with it) and its data deleted with KV's
 * and D1's, then what the test Worker's modules hold (resetTestWorker in
 * test/worker/app/test-worker.ts); apply-migrations.ts then makes the index's tables again.
 * After a file, its run objects are ended too: a run still waiting on a timer or an alarm
 * when the suite ends would keep the pool from ending.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { abortAllDurableObjects, reset } from 'cloudflare:test';
import { afterAll } from 'vitest';
import { resetTestWorker } from './app/test-worker.ts';

/** Ends every Durable Object where it stands, and deletes their data with KV's and D1's. */
async function endObjects(): Promise<void> {
  await abortAllDurableObjects();
  await reset();
}

await endObjects();
await resetTestWorker();

afterAll(endObjects);
