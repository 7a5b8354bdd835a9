/**
 * The run object keeps its journal in pages (run-state.ts): a replay reads one row per page
 * rather than one per entry. These run against a run object's own storage in workerd.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/engine/journal.ts';
import type { DoStorage } from '../../src/worker/platform-types.ts';
import { RunState } from '../../src/worker/run-object/run-state.ts';
import { testEnv } from './app/client.ts';

/** A journal entry of a tool call whose answer is `text`. */
const entry = (seq: number, text = `grabbed ${seq}`): JournalEntry => ({
  chain: '0',
  seq,
  request: {
    op: 'tool.call',
    tool: 'bench/grab',
    name: 'grab',
    args: { value: String(seq) },
    origin: { execution: 'run', section: 'Loop', caller: 'model' },
    call_id: `call_${seq}`,
  },
  answer: { ok: true, value: text },
});

/** Runs `work` on the storage of a new run object holding a new run. */
function withNewRun<T>(work: (storage: DoStorage, state: RunState) => T): Promise<T> {
  const stub = testEnv.RUNS.get(testEnv.RUNS.newUniqueId());
  return runInDurableObject(stub, (_instance: unknown, context: { storage: DoStorage }) => {
    const state = new RunState(context.storage);
    state.create({ run_id: 'run', prompt: 'p', seed: 's', created_at: '', timeout_seconds: 60, deadline_at: Date.now() + 60_000 }, 'source', {});
    return work(context.storage, state);
  });
}

/** The journal's rows: each row's key and how many entries it holds. */
const rows = (storage: DoStorage): [string, number][] =>
  [...storage.kv.list<string | { chunks: number }>({ prefix: 'journal:' })].map(([key, value]) => [
    key,
    typeof value === 'string' ? (value.startsWith('[') ? (JSON.parse(value) as unknown[]).length : 1) : -1,
  ]);

describe('the journal in the run object', () => {
  it('is stored in pages of at most 32 entries, and read back whole and in order', async () => {
    const [pages, read] = await withNewRun((storage, state) => {
      const entries = Array.from({ length: 100 }, (_, i) => entry(i + 1));
      for (const e of entries) state.commitJournal(e, []);
      return [rows(storage), state.journal()];
    });
    expect(pages).toEqual([
      ['journal:000000001', 32],
      ['journal:000000033', 32],
      ['journal:000000065', 32],
      ['journal:000000097', 4],
    ]);
    expect(read).toEqual(Array.from({ length: 100 }, (_, i) => entry(i + 1)));
  });

  it('gives an entry over 32 KiB a page of its own, and starts the next page after it', async () => {
    const big = 'x'.repeat(40_000);
    const [pages, read] = await withNewRun((storage, state) => {
      state.commitJournal(entry(1), []);
      state.commitJournal(entry(2, big), []);
      state.commitJournal(entry(3), []);
      return [rows(storage), state.journal()];
    });
    expect(pages).toEqual([
      ['journal:000000001', 1],
      ['journal:000000002', 1],
      ['journal:000000003', 1],
    ]);
    expect(read).toEqual([entry(1), entry(2, big), entry(3)]);
  });

  it('starts a new page in a new object: the object the run was evicted from is not added to', async () => {
    const [pages, read] = await withNewRun((storage, state) => {
      for (let seq = 1; seq <= 3; seq++) state.commitJournal(entry(seq), []);
      // A new object's state over the same storage, as after an eviction.
      const next = new RunState(storage);
      next.commitJournal(entry(4), []);
      return [rows(storage), next.journal()];
    });
    expect(pages).toEqual([
      ['journal:000000001', 3],
      ['journal:000000004', 1],
    ]);
    expect(read).toEqual([1, 2, 3, 4].map((seq) => entry(seq)));
  });

  it('reads a journal stored one entry to a row (before pages) the same, and goes on in pages after it', async () => {
    const [pages, read] = await withNewRun((storage, state) => {
      for (let seq = 1; seq <= 3; seq++) storage.kv.put(`journal:${String(seq).padStart(9, '0')}`, JSON.stringify(entry(seq)));
      storage.kv.put('progress', { ...state.progress(), journal: 3 });
      const after = new RunState(storage);
      after.commitJournal(entry(4), []);
      after.commitJournal(entry(5), []);
      return [rows(storage), after.journal()];
    });
    expect(pages).toEqual([
      ['journal:000000001', 1],
      ['journal:000000002', 1],
      ['journal:000000003', 1],
      ['journal:000000004', 2],
    ]);
    expect(read).toEqual([1, 2, 3, 4, 5].map((seq) => entry(seq)));
  });
});
