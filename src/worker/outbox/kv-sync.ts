/**
 * Writing a finished run to KV: each of its files, then its record, over as many alarm
 * invocations as it takes.
 *
 * Cloudflare allows 1,000 KV operations per invocation (each is a subrequest), and a run
 * can hold more files than that: a 1,000-arm fanout writing a file per arm needs 1,001 with
 * its record. So one invocation makes at most KV_OPS_PER_ALARM writes, the run object keeps
 * how many files are written in its own storage (`kv_files`), and it sets the alarm again
 * until the record is written too. The record goes last, so a reader who finds it knows every
 * file was written before it. A write of a key writes the text it wrote before (a finished
 * run's files no longer change), so an alarm that runs twice, or runs again after a failure,
 * writes again at most what its progress did not record yet, and ends the same.
 */
import type { KvNamespace } from '../platform-types.ts';
import type { RunState } from '../run-object/run-state.ts';
import { fitsKvKey, kvKeys, writeRunRecord } from './run-store-kv.ts';
import type { ObjectView, RunRecord } from '../run-object/run-view.ts';

/** The most KV operations one alarm invocation makes: half the 1,000 Cloudflare allows, leaving room. */
export const KV_OPS_PER_ALARM = 500;

/** A finished run as its object holds it: what goes to KV. */
export interface FinishedRun {
  runId: string;
  /** Its files' paths, in the order they are written (sorted, as the object's storage lists them). */
  files: readonly string[];
  file(path: string): string;
  /** Its record without the events, and the events as the object stores them (JSON texts). */
  record(): Omit<RunRecord, 'events'>;
  eventTexts(): readonly string[];
}

/** How far one invocation got. */
export interface KvSyncStep {
  /** The files (counted in `files` order) now in KV, or left out for a key too long for KV. */
  files: number;
  /** True when the record is written too: the run is all in KV. */
  done: boolean;
  /** KV operations made. */
  ops: number;
  /** Why a write failed, when one did; the writes before it count in `files`. */
  failure?: string;
}

/**
 * Writes the run's files from index `from` on, then its record, making at most `budget`
 * KV operations; stops at the first failure.
 */
export async function syncToKv(kv: KvNamespace, run: FinishedRun, from: number, budget = KV_OPS_PER_ALARM): Promise<KvSyncStep> {
  let next = from;
  let ops = 0;
  try {
    for (; next < run.files.length; next++) {
      const path = run.files[next]!;
      // A file whose key is too long for KV stays in the run object only.
      if (!fitsKvKey(run.runId, path)) continue;
      if (ops >= budget) return { files: next, done: false, ops };
      await kv.put(kvKeys.file(run.runId, path), run.file(path));
      ops++;
    }
    if (ops >= budget) return { files: next, done: false, ops };
    await writeRunRecord(kv, run.record(), run.eventTexts());
    return { files: next, done: true, ops: ops + 1 };
  } catch (error) {
    return { files: next, done: false, ops, failure: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Writes the next files of the finished run (`view` is its view) to KV, at most
 * KV_OPS_PER_ALARM operations' worth, and the record once every file is there; keeps in
 * `state` how far it got. A failure is logged and left to the alarm to retry, from where it
 * stopped.
 */
export async function syncRunToKv(kv: KvNamespace, state: RunState, view: ObjectView): Promise<'done' | 'more' | 'failed'> {
  const files = state.files();
  const { pending: _pending, ...record } = view;
  const step = await syncToKv(
    kv,
    {
      runId: view.run_id,
      files,
      file: (path) => state.file(path) ?? '',
      record: () => ({ ...record, args: state.args(), files }),
      eventTexts: () => state.eventTexts(),
    },
    state.progress().kv_files ?? 0,
  );
  state.markKvFiles(step.files);
  if (step.done) {
    state.markKvSynced();
    return 'done';
  }
  if (step.failure === undefined) return 'more';
  console.error(`run ${view.run_id}: writing to KV failed after ${step.files} of ${files.length} files, the alarm retries: ${step.failure}`);
  return 'failed';
}
