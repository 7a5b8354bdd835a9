/**
 * The end-to-end check's "a run becomes a test; a run forks" (scripts/e2e.mjs): a run's test
 * file, fetched over HTTP (GET /runs/:id/test.yaml), passes `runvil test` in a fresh folder
 * with no network (the command line gets no variables but PATH and HOME); a fork of the run
 * (POST /runs/:id/fork) at the end of its journal ends as the run did, and one from its
 * start goes on live and completes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, step } from './e2e-client.mjs';

/** Fetches the run's test file and runs `runvil test` on it in a folder of its own; answers the file's text. */
export async function checkTestFile({ api, root }, runId, name) {
  const testFile = await api('GET', `/runs/${runId}/test.yaml`);
  const folder = mkdtempSync(join(tmpdir(), 'runvil-e2e-test-'));
  try {
    writeFileSync(join(folder, `${name}.test.yaml`), testFile);
    const tested = await new Promise((resolve) => {
      execFile(
        process.execPath,
        [join(root, 'bin/runvil.mjs'), 'test'],
        { cwd: folder, env: { PATH: process.env.PATH ?? '', HOME: folder } },
        (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }),
      );
    });
    const passed = new RegExp(`^ok   \\S*${name}\\.test\\.yaml\\n1 passed, 0 failed\\n$`);
    check(
      tested.code === 0 && passed.test(tested.stdout),
      `runvil test passes the test file of run ${runId} (${name}): ${JSON.stringify(tested)}\n${testFile}`,
    );
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  step(`the test.yaml of run ${runId} (${name}, ${testFile.length} bytes) passed \`runvil test\` offline in a fresh folder`);
  return testFile;
}

/** How many entries a test file's journal map lists. */
export const journalLength = (testFile) => testFile.split('\n').filter((line) => /^# {3}\d+\. /.test(line)).length;

/**
 * Forks the run at the end of its journal and at 0; `live(forkId)` does what the world does
 * for a fork that goes on live (posts a tool's result). Each fork must end as `ended` says.
 */
export async function checkForks({ api, untilSettled }, runId, testFile, ended, live = async () => {}) {
  for (const at of [journalLength(testFile), 0]) {
    const forked = await api('POST', `/runs/${runId}/fork`, { body: { at }, expect: 202 });
    check(forked.forked_from?.run_id === runId && forked.forked_from.at === at, `the fork of run ${runId} at ${at} started: ${JSON.stringify(forked)}`);
    if (at === 0) await live(forked.run_id);
    const done = await untilSettled(forked.run_id);
    check(ended(done), `the fork of run ${runId} at ${at} ended as the run did: ${JSON.stringify(done)}`);
  }
  step(`run ${runId} forked at the end of its journal and at 0; both forks ended as the run did`);
}
