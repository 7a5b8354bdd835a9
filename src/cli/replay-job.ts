/**
 * One run's replay for `runvil deploy-check`, as a replay thread (replay-worker.ts) and the
 * command's own thread (replay-pool.ts) both do it: a Lua platform and a replay Host made
 * once from the configuration about to be deployed, then each run's journal answer replayed
 * (src/host/replay-check.ts) into what the report says of the run.
 */
import { EMPTY_CONFIG } from '../config/deployment-config.ts';
import { checkReplay, type ReplayMaterial } from '../host/replay-check.ts';
import { loadDeploymentConfig } from './config-file.ts';
import { cliPlatform } from './platform.ts';
import type { ReplayJob, ReplayOutcome, ReplaySetup } from './replay-pool.ts';
import { replayHosts } from './replay-host.ts';

/** Replays jobs with `setup`'s build; made once per thread. */
export async function replayer(setup: ReplaySetup): Promise<(job: ReplayJob) => Promise<ReplayOutcome>> {
  const platform = await cliPlatform();
  const hostOf = replayHosts(setup.config === null ? EMPTY_CONFIG : await loadDeploymentConfig(setup.config), setup.env);
  const local = new Map(setup.prompts);
  return async (job) => {
    try {
      const material = job.material as unknown as ReplayMaterial;
      const verdict = await checkReplay(platform, await hostOf(material.packs), material);
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
  };
}
