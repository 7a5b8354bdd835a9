/**
 * A run that resumes on another build than it started on, and whose replay no longer
 * reproduces its journal, fails with kind `Determinism` (the Engine's words name the step):
 * here its error also names both builds, in words and as fields (`started_build`,
 * `resumed_build`), so the person who reads it knows the deploy did it, and which deploy.
 * Any other error, and a Determinism error on the build the run started on, is left as is.
 */
import { buildChangeWords, sameDeployment, type DeploymentBuild } from '../../host/run-build.ts';
import type { RunErrorView } from './run-view.ts';

/** `error` with both builds named, when it is a Determinism error of a run resumed on a build other than `started`. */
export function acrossBuilds(error: RunErrorView, started: DeploymentBuild | null, resumed: DeploymentBuild | null): RunErrorView {
  if (error.kind !== 'Determinism' || started === null || resumed === null || sameDeployment(started, resumed)) return error;
  const started_build = deploymentPart(started);
  const resumed_build = deploymentPart(resumed);
  return {
    kind: error.kind,
    message: `${error.message}; ${buildChangeWords(started_build, resumed_build)}, which no longer replays its journal (runvil deploy-check finds such runs before a deploy)`,
    started_build,
    resumed_build,
  };
}

/** The deployment's part of a build (a run's build also holds its prompt and Packs, which a resume keeps). */
function deploymentPart(build: DeploymentBuild): DeploymentBuild {
  return { id: build.id, engine: build.engine, lua: build.lua, config: build.config };
}
