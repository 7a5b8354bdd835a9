/**
 * Each test file starts from the state a runtime of its own would give it, and leaves
 * nothing running. The suite's files share a few runtimes (vitest.workers.config.ts), one
 * file at a time in each; so before a file, what the file before left is taken away: every
 * Durable Object, its data and alarm with it, the run objects' and those KV and D1 keep
 * theirs in, so that no run goes on and KV and D1 are empty; then what the test Worker's
 * modules hold (resetTestWorker in test/worker/app/test-worker.ts). apply-migrations.ts
 * then makes the index's tables again. After a file, its objects are ended too: a run
 * still waiting on a timer or an alarm when the suite ends would keep the pool from ending.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { listDurableObjectIds, reset, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll } from 'vitest';
import type { D1Database, DoNamespace, KvNamespace } from '../../src/worker/platform-types.ts';
import { resetTestWorker, runObjectIds } from './app/test-worker.ts';

/** The environment's bindings of a kind, by the runtime's class name (as cloudflare:test tells a namespace; an RPC stub answers every method). */
const bindingsOf = <T>(kind: string) =>
  Object.entries(env as unknown as Record<string, unknown>).filter(
    ([name, value]) => !name.startsWith('__VITEST_POOL_WORKERS') && typeof value === 'object' && value !== null && value.constructor.name === kind,
  ) as [string, T][];
const namespaces = bindingsOf<DoNamespace<unknown>>('DurableObjectNamespace');
const kvs = bindingsOf<KvNamespace>('KvNamespace');
const databases = bindingsOf<D1Database>('D1Database');

/**
 * Deletes every Durable Object with its data and alarm. `reset()` deletes (and ends) only the
 * objects in memory, so each is brought into memory first: the run objects made since the
 * last reset (one whose memory a test dropped keeps its data and alarm otherwise, and the
 * alarm would resume its run in the next file), the objects of the other namespaces, and the
 * ones KV and D1 are kept in.
 */
async function endObjects(): Promise<void> {
  for (const [name, namespace] of namespaces) {
    const ids = name === 'RUNS' ? runObjectIds().map((id) => namespace.idFromString(id)) : await listDurableObjectIds(namespace);
    for (const id of ids) await runInDurableObject(namespace.get(id), () => {});
  }
  for (const [, kv] of kvs) await kv.get('fresh-state');
  for (const [, db] of databases) await db.prepare('SELECT 1').all();
  await reset();
}

/** What every file assumes, checked where it is cheap: no other file's runs or prompts. */
async function expectEmpty(): Promise<void> {
  for (const [name, kv] of kvs) {
    const [left] = (await kv.list({ limit: 1 })).keys;
    if (left) throw new Error(`fresh-state.ts: ${name} still holds ${left.name} after reset(): the file cannot start empty`);
  }
}

await endObjects();
await expectEmpty();
await resetTestWorker();

afterAll(endObjects);
