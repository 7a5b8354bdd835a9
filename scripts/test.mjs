#!/usr/bin/env node
/**
 * `npm test`: every check and test suite of the project, each step to its end whatever the
 * others did, and exit 1 if any failed. On the 2-core machine two steps run at once: two
 * runners each take the next step of one queue as they finish one, the costliest steps first
 * (by the CPU seconds each takes, `cpu` below), so that the cheap ones fill in at the end and
 * both cores stay busy until the last step ends. A step's waits (a server starting, a page
 * loading) leave the CPU to the other runner's step. Any two steps may run at once: each
 * local server builds into its own state directory (scripts/local-wrangler-config.mjs), so
 * the steps that serve one (browser, e2e, e2e-deploy, conformance, e2e-mcp) and the CLI
 * tests' servers no longer reload one another. The workerd suites go first and alone (`alone`
 * below): they keep both cores busy by themselves (three runtimes), and beside another step
 * they took 3.8 times as long (526 s against 139 s from a quiet clean clone, their CPU the
 * same), the whole command waiting on them.
 *
 * A step's output is kept whole in .wrangler/test-logs/<step>.log and printed when the step
 * ends, in one piece rather than interleaved with the other runner's; a step that passed shows
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
 * The steps. `limit` is how long the step may take even on a slow, busy machine; past it the
 * step is taken to hang. `cpu` is about how many CPU seconds (user and system, of the step's
 * whole process tree) it took on the 2-core machine: it orders the queue, the costliest first.
 * `alone`: the step runs by itself, before the queue. A new step gives its own cpu, measured (e.g. `/usr/bin/time -f '%U %S' node scripts/test.mjs
 * <step>`; a step that kills a server by its process group undercounts its workerd).
 */
const STEPS = [
  { name: 'typecheck', command: 'npm run --silent typecheck', limit: 10 * MINUTE, cpu: 36 },
  { name: 'format', command: 'npm run --silent format:check', limit: 5 * MINUTE, cpu: 19 },
  { name: 'cycles', command: 'npm run --silent check:cycles', limit: 5 * MINUTE, cpu: 12 },
  { name: 'node', command: 'npm run --silent test:node', limit: 20 * MINUTE, cpu: 160 },
  // --entry-timeout: the default, 60 s of wall clock per section entry, is a bound for a
  // user's run; with both cores busy an entry of a few CPU seconds (var-size-limit's
  // rewriting-under-the-cap) took longer, and no prompt test expects that limit.
  { name: 'prompts', command: 'node bin/runvil.mjs test test/prompts --entry-timeout 600', limit: 10 * MINUTE, cpu: 16 },
  { name: 'workers', command: 'npm run --silent test:workers', limit: 25 * MINUTE, cpu: 230, alone: true },
  { name: 'browser', command: 'npm run --silent test:browser', limit: 15 * MINUTE, cpu: 64 },
  // Then streaming on the real local server with loopback model servers (issue 30).
  { name: 'e2e', command: 'npm run --silent e2e && node scripts/e2e-stream.mjs', limit: 12 * MINUTE, cpu: 62 },
  // Deploys that never break a run in flight: builds A, B and C served in turn on one state (issue 31).
  { name: 'e2e-deploy', command: 'node scripts/e2e-deploy.mjs', limit: 10 * MINUTE, cpu: 60 },
  // /mcp: the MCP project's conformance suite, then clients no one here wrote (issue 28).
  { name: 'conformance', command: 'npm run --silent mcp:conformance', limit: 10 * MINUTE, cpu: 18 },
  { name: 'e2e-mcp', command: 'npm run --silent e2e:mcp', limit: 10 * MINUTE, cpu: 37 },
];

/** How many steps run at once: one per core of the 2-core machine. */
const RUNNERS = 2;

const only = process.argv.slice(2);
const known = STEPS.map((step) => step.name);
const unknown = only.filter((name) => !known.includes(name));
if (unknown.length > 0) {
  console.error(`test.mjs: no step named ${unknown.join(', ')}; the steps are ${known.join(', ')}`);
  process.exit(2);
}
const queue = STEPS.filter((step) => only.length === 0 || only.includes(step.name)).sort((a, b) => b.cpu - a.cpu);

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

for (const step of queue.filter((step) => step.alone)) await runStep(step);
const shared = queue.filter((step) => !step.alone);
await Promise.all(
  Array.from({ length: RUNNERS }, async () => {
    for (let step = shared.shift(); step; step = shared.shift()) await runStep(step);
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
