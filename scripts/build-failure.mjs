/**
 * How a bundle script of wrangler's `[build]` (bundle-prompts.mjs, bundle-config.mjs) stops
 * on a file that does not parse or compile: its problems, one line each as
 * `file:line:column: error[Kind]: message`, with no stack trace.
 *
 * Ordinarily the script exits 1, which fails the build: `npm start` before it serves,
 * `wrangler deploy` and `npm run deploy`. While `npm start` serves, it runs the build again on
 * each change under prompts/ (wrangler.toml's [build] is left out of its local configuration,
 * scripts/local-wrangler-config.mjs), with RUNVIL_KEEP_LAST_GOOD_BUILD=1: then a problem
 * writes nothing and exits 0, so the generated modules of the last good build stay as they
 * are and wrangler, which reloads the Worker when they change, goes on serving them. The
 * problem is printed once, with a note saying so: the same problems again (an editor's save
 * often fires several changes) print nothing until a build succeeds.
 *
 * (Under a plain `wrangler dev`, whose own watcher runs [build], a failing command leaves its
 * proxy holding requests, since it pauses them when a build starts and resumes them when a
 * bundle completes, and prints the problem three times: the command's output, execa's error
 * repeating it, its own. `npm start` is the way to serve locally.)
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Whether the build keeps the last good generated module instead of failing (see above). */
export function keepsLastGoodBuild() {
  return process.env.RUNVIL_KEEP_LAST_GOOD_BUILD === '1';
}

/** Where the problems last printed for the generated module `out` are kept, under .wrangler/. */
function memoOf(out) {
  return join(root, '.wrangler/build-failures', `${createHash('sha256').update(out).digest('hex').slice(0, 16)}.txt`);
}

/** Stops the script on `problems` (lines), for the generated module `out`; never returns. */
export function failBuild(problems, out) {
  const text = problems.join('\n');
  if (!keepsLastGoodBuild()) {
    process.stderr.write(`${text}\n`);
    process.exit(1);
  }
  const memo = memoOf(out);
  if (!existsSync(memo) || readFileSync(memo, 'utf8') !== text) {
    process.stderr.write(`${text}\n(not rebuilt: the server keeps serving the last good build until this is fixed)\n`);
    mkdirSync(dirname(memo), { recursive: true });
    writeFileSync(memo, text);
  }
  process.exit(0);
}

/** Forgets the problems printed for `out`: the next failure prints again. */
export function buildSucceeded(out) {
  rmSync(memoOf(out), { force: true });
}
