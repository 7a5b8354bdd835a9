#!/usr/bin/env node
/**
 * `npm test`: every check and test suite of the project, each step to its end whatever the
 * others did, and exit 1 if any failed. On the 2-core machine the steps run in two lanes at
 * once, of about the same length: the static checks, the Node suites and the prompt tests in
 * one; the workerd suites, the browser tests, the end-to-end check and the MCP checks (the
 * conformance suite, e2e-mcp) in the other (the steps that serve the local server never at the
 * same time). Each lane's waits (a server starting, a page loading) leave the CPU to the other.
 *
 * A step's output is kept whole in .wrangler/test-logs/<step>.log and printed when the step
 * ends, in one piece rather than interleaved with the other lane's; a step that passed shows
 * its last lines (its summary), one that failed shows all of it. A step that runs past its
 * limit is a hang, not a slow machine: its process group is stopped and the step fails,
 * saying so. At the end, a table of every step's result and time.
 *
 * `node scripts/test.mjs typecheck node` runs only the steps named.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const logDir = join(root, '.wrangler/test-logs');
const MINUTE = 60_000;
/** How many lines of a passing step's output are shown: its report's summary. */
const TAIL_LINES = 12;

/**
 * The steps, in two lanes; a lane runs its steps one after another. `limit` is how long the
 * step may take even on a slow, busy machine; past it the step is taken to hang.
 */
const LANES = [
  [
    { name: 'typecheck', command: 'npm run --silent typecheck', limit: 10 * MINUTE },
    { name: 'format', command: 'npm run --silent format:check', limit: 5 * MINUTE },
    { name: 'cycles', command: 'npm run --silent check:cycles', limit: 5 * MINUTE },
    { name: 'node', command: 'npm run --silent test:node', limit: 20 * MINUTE },
    { name: 'prompts', command: 'node bin/runvil.mjs test test/prompts', limit: 10 * MINUTE },
  ],
  [
    { name: 'workers', command: 'npm run --silent test:workers', limit: 25 * MINUTE },
    // The steps that serve the local server share one lane: each writes the checkout's
    // generated config and wrangler's env file, which another's server would reload.
    { name: 'browser', command: 'npm run --silent test:browser', limit: 15 * MINUTE },
    // Then streaming on the real local server with loopback model servers (issue 30).
    { name: 'e2e', command: 'npm run --silent e2e && node scripts/e2e-stream.mjs', limit: 12 * MINUTE },
    // Deploys that never break a run in flight: builds A, B and C served in turn on one state (issue 31).
    { name: 'e2e-deploy', command: 'node scripts/e2e-deploy.mjs', limit: 10 * MINUTE },
    // /mcp: the MCP project's conformance suite, then clients no one here wrote (issue 28).
    { name: 'conformance', command: 'npm run --silent mcp:conformance', limit: 10 * MINUTE },
    { name: 'e2e-mcp', command: 'npm run --silent e2e:mcp', limit: 10 * MINUTE },
  ],
];

const only = process.argv.slice(2);
const known = LANES.flat().map((step) => step.name);
const unknown = only.filter((name) => !known.includes(name));
if (unknown.length > 0) {
  console.error(`test.mjs: no step named ${unknown.join(', ')}; the steps are ${known.join(', ')}`);
  process.exit(2);
}
const lanes = LANES.map((lane) => lane.filter((step) => only.length === 0 || only.includes(step.name))).filter((lane) => lane.length > 0);

mkdirSync(logDir, { recursive: true });
const started = Date.now();
/** @type {Map<string, { ok: boolean; seconds: number; note: string }>} */
const results = new Map();
/** @type {Set<import('node:child_process').ChildProcess>} */
const running = new Set();

/** Runs one step in its own process group, its output to its log; resolves with its result. */
function runStep(step) {
  const log = join(logDir, `${step.name}.log`);
  const out = createWriteStream(log);
  const begun = Date.now();
  console.log(`▶ ${step.name}: ${step.command}`);
  return new Promise((done) => {
    const child = spawn(step.command, {
      cwd: root,
      shell: true,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CI: process.env.CI ?? '1' },
    });
    running.add(child);
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    let note = '';
    const timer = setTimeout(() => {
      note = `no result after ${step.limit / MINUTE} min: taken to hang, stopped`;
      stopGroup(child);
    }, step.limit);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      out.end(() => {
        const ok = code === 0 && note === '';
        if (!ok && note === '') note = signal ? `ended by ${signal}` : `exit ${code}`;
        const seconds = (Date.now() - begun) / 1000;
        report(step, log, ok, seconds, note);
        results.set(step.name, { ok, seconds, note });
        done();
      });
    });
  });
}

/** Stops a step's whole process group (servers and workerd it started among them) by its pid. */
function stopGroup(child) {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  setTimeout(() => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }, 10_000).unref();
}

/** Prints a finished step's output: all of it when it failed, its summary when it passed. */
function report(step, log, ok, seconds, note) {
  const text = readFileSync(log, 'utf8')
    .replace(/\x1b\[[0-9;]*m/g, '')
    .trimEnd();
  const lines = text === '' ? [] : text.split('\n');
  const shown = ok ? lines.slice(-TAIL_LINES) : lines;
  const rule = `── ${step.name} ${ok ? 'passed' : 'FAILED'} in ${seconds.toFixed(1)} s${note ? ` (${note})` : ''}`;
  console.log(`\n${rule} ${'─'.repeat(Math.max(0, 78 - rule.length))}`);
  if (ok && lines.length > TAIL_LINES) console.log(`   … the last ${TAIL_LINES} of ${lines.length} lines; all in ${log}`);
  if (shown.length > 0) console.log(shown.map((line) => `   ${line}`).join('\n'));
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) stopGroup(child);
    process.exit(130);
  });
}

await Promise.all(
  lanes.map(async (lane) => {
    for (const step of lane) await runStep(step);
  }),
);

const failed = [...results.values()].filter((result) => !result.ok).length;
console.log(
  `\n── npm test: ${failed === 0 ? 'every step passed' : `${failed} of ${results.size} steps FAILED`}, ${((Date.now() - started) / 1000).toFixed(1)} s in all`,
);
for (const name of known.filter((name) => results.has(name))) {
  const { ok, seconds, note } = results.get(name);
  console.log(`   ${ok ? 'ok  ' : 'FAIL'} ${name.padEnd(10)} ${seconds.toFixed(1).padStart(6)} s${note ? `  ${note}` : ''}`);
}
process.exit(failed === 0 ? 0 : 1);
