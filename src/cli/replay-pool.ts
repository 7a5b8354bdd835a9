/**
 * The replayers of `runvil deploy-check`: the command's own thread, which starts replaying at
 * once, and worker threads (replay-worker.ts), each with its own Lua platform, which join as
 * each is ready (a thread loads the Engine's modules anew, which takes seconds on a busy
 * machine). Runs are handed out as their journals arrive, so fetching and replaying overlap;
 * a worker holds at most two runs at a time (one replaying, one waiting) and the command's
 * thread one, as it also fetches, so a slow run never leaves a replayer idle while a queue
 * builds up behind it.
 */
import { Worker } from 'node:worker_threads';
import type { Json } from '../json/json.ts';
import type { ReplayVerdict } from '../host/replay-check.ts';

/** What every replayer is made with. */
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

/** Replayers; `replay` answers once one has replayed the run. */
export interface ReplayPool {
  replay(material: Json): Promise<ReplayOutcome>;
  close(): Promise<void>;
}

/** One replayer: the runs it holds, and how it is handed one. */
interface Slot {
  load: number;
  capacity: number;
  send(job: ReplayJob): void;
}

/**
 * Starts `replayers` replayers with `setup`: this thread, and `replayers - 1` worker threads.
 * Answers at once; a worker that fails to start leaves the others to do its share.
 */
export function startReplayPool(replayers: number, setup: ReplaySetup): ReplayPool {
  const slots: Slot[] = [];
  const waiting = new Map<number, (outcome: ReplayOutcome) => void>();
  const queue: ReplayJob[] = [];
  let nextId = 0;

  const settle = (slot: Slot, outcome: ReplayOutcome) => {
    slot.load--;
    const done = waiting.get(outcome.job);
    waiting.delete(outcome.job);
    done?.(outcome);
    dispatch();
  };
  const dispatch = () => {
    for (const slot of slots) {
      while (queue.length > 0 && slot.load < slot.capacity) {
        slot.load++;
        slot.send(queue.shift()!);
      }
    }
  };

  // This thread: its replayer is made on first use, from the modules the command already loads.
  const own = import('./replay-job.ts').then(({ replayer }) => replayer(setup));
  const ownSlot: Slot = {
    load: 0,
    capacity: 1,
    send: (job) =>
      void own.then(
        (replay) => replay(job).then((outcome) => settle(ownSlot, outcome)),
        (error: unknown) =>
          settle(ownSlot, { job: job.id, failure: `the replayer could not start: ${error instanceof Error ? error.message : String(error)}` }),
      ),
  };
  slots.push(ownSlot);

  const entry = new URL('../../bin/replay-worker.mjs', import.meta.url);
  const workers = Array.from({ length: Math.max(0, replayers - 1) }, () => new Worker(entry, { workerData: setup, env: setup.env }));
  for (const worker of workers) {
    const held = new Map<number, ReplayJob>();
    const slot: Slot = {
      load: 0,
      capacity: 2,
      send: (job) => {
        held.set(job.id, job);
        worker.postMessage(job);
      },
    };
    worker.once('message', () => {
      worker.on('message', (outcome: ReplayOutcome) => {
        held.delete(outcome.job);
        settle(slot, outcome);
      });
      slots.push(slot);
      dispatch();
    });
    // A thread that fails: the runs it held go back to the queue, for the others.
    worker.once('error', () => {
      const at = slots.indexOf(slot);
      if (at >= 0) slots.splice(at, 1);
      queue.unshift(...held.values());
      held.clear();
      dispatch();
    });
  }

  return {
    replay(material) {
      const id = nextId++;
      return new Promise((done) => {
        waiting.set(id, done);
        queue.push({ id, material });
        dispatch();
      });
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
