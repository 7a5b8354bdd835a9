/**
 * A replay thread of `runvil deploy-check` (replay-pool.ts): its own Lua platform and Host,
 * built once from the configuration about to be deployed; it takes a run's
 * `GET /runs/:id/journal` answer, replays the run (src/host/replay-check.ts) and answers the
 * verdict with what the report says of the run.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EMPTY_CONFIG } from '../config/deployment-config.ts';
import { checkReplay, type ReplayMaterial } from '../host/replay-check.ts';
import { loadDeploymentConfig } from './config-file.ts';
import { cliPlatform } from './platform.ts';
import { replayHosts } from './replay-host.ts';
import type { ReplayJob, ReplayOutcome, ReplaySetup } from './replay-pool.ts';

const setup = workerData as ReplaySetup;
const platform = await cliPlatform();
const hostOf = replayHosts(setup.config === null ? EMPTY_CONFIG : await loadDeploymentConfig(setup.config), setup.env);
const local = new Map(setup.prompts);

parentPort!.on('message', (job: ReplayJob) => {
  void replay(job).then((outcome) => parentPort!.postMessage(outcome));
});
parentPort!.postMessage({ ready: true });

async function replay(job: ReplayJob): Promise<ReplayOutcome> {
  try {
    const material = job.material as unknown as ReplayMaterial;
    const verdict = await checkReplay(platform, hostOf(material.packs), material);
    const file = local.get(material.prompt);
    return {
      job: job.id,
      run_id: material.run_id,
      prompt: material.prompt,
      status: material.status,
      build: material.build ?? null,
      otherSource: file !== undefined && file !== material.source,
      verdict,
    };
  } catch (error) {
    return { job: job.id, failure: error instanceof Error ? error.message : String(error) };
  }
}
