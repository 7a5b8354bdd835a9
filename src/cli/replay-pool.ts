/**
 * The replay threads of `runvil deploy-check`: one per core by default, each with its own Lua
 * platform (replay-worker.ts), fed runs as their journals arrive so fetching and replaying
 * overlap. Each thread holds at most two runs at a time (one replaying, one waiting), so a
 * slow run never leaves another thread idle while a queue builds up behind it.
 */
import { Worker } from 'node:worker_threads';
import type { Json } from '../json/json.ts';
import type { ReplayVerdict } from '../host/replay-check.ts';

/** What every replay thread is started with. */
export interface ReplaySetup {
  /** The configuration file about to be deployed, or null for none. */
  config: string | null;
  /** The environment its `${NAME}` references read. */
  env: Record<string, string>;
  /** The local prompts (prompts/*.md) by name: a run of one whose source differs is noted. */
  prompts: [string, string][];
}

/** One run to replay: its `GET /runs/:id/journal` answer. */
export interface ReplayJob {
  id: number;
  material: Json;
}

/** A replayed run, or why it could not be replayed. */
export type ReplayOutcome =
  | {
      job: number;
      run_id: string;
      prompt: string;
      status: string;
      /** The build the run started on, as the deployment recorded it (null for a run older than builds). */
      build: Json;
      /** The local prompts/ file of its prompt differs from the source the run started on. */
      otherSource: boolean;
      verdict: ReplayVerdict;
    }
  | { job: number; failure: string };

/** Threads that replay runs; `replay` answers once a thread has. */
export interface ReplayPool {
  replay(material: Json): Promise<ReplayOutcome>;
  close(): Promise<void>;
}

/** The most runs handed to one thread before it answers. */
const PER_THREAD = 2;

/** Starts `threads` replay threads with `setup`; settles once each has built its platform and Host. */
export async function startReplayPool(threads: number, setup: ReplaySetup): Promise<ReplayPool> {
  const entry = new URL('../../bin/replay-worker.mjs', import.meta.url);
  const workers = Array.from({ length: threads }, () => new Worker(entry, { workerData: setup, env: setup.env }));
  const load = new Map<Worker, number>(workers.map((worker) => [worker, 0]));
  const waiting = new Map<number, (outcome: ReplayOutcome) => void>();
  const queue: ReplayJob[] = [];
  let nextId = 0;
  let broken: Error | null = null;

  const dispatch = () => {
    for (const worker of workers) {
      while (queue.length > 0 && load.get(worker)! < PER_THREAD) {
        load.set(worker, load.get(worker)! + 1);
        worker.postMessage(queue.shift()!);
      }
    }
  };
  const fail = (error: Error) => {
    broken ??= error;
    for (const [job, settle] of waiting) settle({ job, failure: `a replay thread stopped: ${error.message}` });
    waiting.clear();
  };

  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((ready, refuse) => {
          worker.once('error', refuse);
          worker.once('message', () => {
            worker.off('error', refuse);
            worker.on('error', fail);
            worker.on('message', (outcome: ReplayOutcome) => {
              load.set(worker, load.get(worker)! - 1);
              const settle = waiting.get(outcome.job);
              waiting.delete(outcome.job);
              settle?.(outcome);
              dispatch();
            });
            ready();
          });
        }),
    ),
  ).catch(async (error: unknown) => {
    await Promise.all(workers.map((worker) => worker.terminate()));
    throw error;
  });

  return {
    replay(material) {
      const id = nextId++;
      if (broken) return Promise.resolve({ job: id, failure: `a replay thread stopped: ${broken.message}` });
      return new Promise((settle) => {
        waiting.set(id, settle);
        queue.push({ id, material });
        dispatch();
      });
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
