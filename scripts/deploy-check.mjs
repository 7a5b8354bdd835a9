#!/usr/bin/env node
/**
 * The first step of `npm run deploy`: `runvil deploy-check` against the deployment about to
 * be replaced, whose address RUNVIL_URL gives (its key: RUNVIL_API_TOKEN). Without RUNVIL_URL
 * there is nothing to check (a first deploy, or a deployment not named here): it says so and
 * lets the deploy go on. RUNVIL_DEPLOY_FORCE=1 passes --force (the check still prints what
 * would break). Exits with the check's status, so a run that would break stops the deploy.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const url = process.env.RUNVIL_URL;
if (!url) {
  console.log(
    "deploy-check: skipped: RUNVIL_URL is not set. Set it to the deployment's address (and RUNVIL_API_TOKEN to its key) to replay its runs in flight on this build before deploying; a first deploy has none.",
  );
  process.exit(0);
}
const args = [join(root, 'bin/runvil.mjs'), 'deploy-check', '--url', url, ...(process.env.RUNVIL_DEPLOY_FORCE === '1' ? ['--force'] : [])];
const checked = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
process.exit(checked.status ?? 1);
