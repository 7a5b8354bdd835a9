/**
 * A replay thread of `runvil deploy-check` (replay-pool.ts): it makes its replayer
 * (replay-job.ts: its own Lua platform and Host), says it is ready, then answers each run it
 * is handed with its verdict.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ReplayJob, ReplaySetup } from './replay-pool.ts';
import { replayer } from './replay-job.ts';

const replay = await replayer(workerData as ReplaySetup);
parentPort!.on('message', (job: ReplayJob) => {
  void replay(job).then((outcome) => parentPort!.postMessage(outcome));
});
parentPort!.postMessage({ ready: true });
