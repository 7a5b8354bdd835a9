#!/usr/bin/env node
/**
 * The end-to-end check of deploys that never break a run in flight (issue 31), on the real
 * local server and one persisted state, with three builds of this checkout, each a copy in a
 * temporary directory (its src, bin, scripts, packs, prompts and runvil.yaml; node_modules
 * linked), served in turn, one server start each:
 *
 * - A: prompts `triage` (asks who owns a topic, with json.encode in the question, then when it
 *   ships) and `release` (calls deploy/start of an HTTP tool service of this script's own,
 *   which answers 202: a tool that waits). Runs are left suspended on triage's second ask, on
 *   its first ask, and on the tool. A deploy-check before any run passes; one with a refused
 *   key says so.
 * - B: A with a prompt added and a Pack no prompt uses in runvil.yaml (another build id, which
 *   nothing the runs do depends on): `runvil deploy-check` from B passes (exit 0); the server
 *   switched to B completes the first set of runs as A would have.
 * - C: B with a test-only change to the Lua runtime (json.encode adds a space: triage's first
 *   question changes, so a triage run past its first ask no longer replays) and `release`'s
 *   early section edited: deploy-check from C names exactly the triage runs past their first
 *   ask, with the step, and exits 1; release's runs are noted as finishing on their own source.
 *   `--force` goes ahead; the server switched to C: the named runs, answered, fail with
 *   Determinism naming both builds; the others complete (release with its own source's text).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { check, e2eClient, sleep, step } from './e2e-client.mjs';
import { freePort } from './local-server.mjs';
import { startToolService, TOOL_SERVICE_SECRET } from './tool-service.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const token = randomBytes(16).toString('hex');
const work = mkdtempSync(join(tmpdir(), 'runvil-e2e-deploy-'));
const stateDir = join(work, 'state');
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const { api, untilSettled } = e2eClient(base, token);
const service = await startToolService();
let server = null;
let serving = null;

const TRIAGE = `---
name: triage
description: Asks who owns a topic, then when it ships.
runvil: 0
uses: [user-input]
args:
  topic: { type: string }
---
# Triage

## Owner
\`\`\`lua
var.owner = tools.call('user-input/ask', { question = 'Who owns ' .. json.encode({ topic = args.topic }) .. '?' })
\`\`\`

## Date
\`\`\`lua
var.date = tools.call('user-input/ask', { question = 'When does ' .. args.topic .. ' ship?' })
return args.topic .. ': ' .. var.owner .. ', ' .. var.date
\`\`\`
`;

const RELEASE = `---
name: release
description: Deploys a service through a tool that answers later.
runvil: 0
uses: [acme/deploy]
args:
  service: { type: string }
---
# Release

## Prepare
\`\`\`lua
var.note = 'release of ' .. args.service
\`\`\`

## Deploy
\`\`\`lua
local out = tools.call('deploy/start', { service = args.service })
return var.note .. ': ' .. out
\`\`\`
`;

const HELLO = `---
name: hello-b
description: A prompt build B adds, which no run in flight uses.
runvil: 0
---
# Hello

## Only
\`\`\`lua
return 'hello'
\`\`\`
`;

const CONFIG = `packs:
  acme/deploy:
    http:
      url: ${service.url}
      secret: \${RUNVIL_E2E_DEPLOY_SECRET}
    trusted: true
    tools:
      - name: start
        description: Start a deploy and wait until it is live.
        parameters: { type: object, properties: { service: { type: string } }, required: [service] }
`;

/** A copy of the checkout (or of another build) under the work directory, its prompts and runvil.yaml as given. */
function makeBuild(name, from, prompts, config) {
  const dir = join(work, name);
  for (const entry of ['src', 'bin', 'scripts', 'packs', 'migrations', 'package.json', 'tsconfig.json', 'wrangler.toml']) {
    cpSync(join(from, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  rmSync(join(dir, 'prompts'), { recursive: true, force: true });
  mkdirSync(join(dir, 'prompts'));
  for (const [file, text] of Object.entries(prompts)) writeFileSync(join(dir, 'prompts', `${file}.md`), text);
  writeFileSync(join(dir, 'runvil.yaml'), config);
  return dir;
}

/** Serves build `dir` on the one port and state directory (the previous build's server is stopped first). */
async function serve(dir) {
  await stop();
  const { startLocalServer, killLocalServer } = await import(pathToFileURL(join(dir, 'scripts/local-server.mjs')).href);
  server = await startLocalServer({ port, token, stateDir, env: { RUNVIL_E2E_DEPLOY_SECRET: TOOL_SERVICE_SECRET } });
  serving = { dir, kill: killLocalServer };
}

async function stop() {
  if (server) await serving.kill(server);
  server = null;
}

/** `runvil deploy-check` of build `dir`, run there (its Engine, runtime, prompts and runvil.yaml). */
function deployCheck(dir, args = [], key = token) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(dir, 'bin/runvil.mjs'), 'deploy-check', '--url', base, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, RUNVIL_API_TOKEN: key, RUNVIL_E2E_DEPLOY_SECRET: TOOL_SERVICE_SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** A triage run, suspended on its first ask, or answered once and suspended on its second. */
async function triage(topic, answered) {
  const { run_id: runId } = await api('POST', '/prompts/triage/runs', { body: { args: { topic } }, expect: 202 });
  let view = await untilSettled(runId);
  check(
    view.status === 'suspended' && view.pending[0]?.question === `Who owns {"topic":"${topic}"}?`,
    `triage ${runId} asks who owns it: ${JSON.stringify(view)}`,
  );
  if (answered) view = await answer(runId, 'ann');
  return { runId, topic, answered };
}

/** Answers the run's pending ask; the run as it settles. */
async function answer(runId, text) {
  const view = await api('GET', `/runs/${runId}`);
  const ask = view.pending.find((pending) => pending.kind === 'ask');
  check(ask !== undefined, `run ${runId} waits on an ask: ${JSON.stringify(view)}`);
  await api('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: text } });
  return untilSettled(runId);
}

/** A release run, suspended on deploy/start (the service answered 202). */
async function release(name) {
  const { run_id: runId } = await api('POST', '/prompts/release/runs', { body: { args: { service: name } }, expect: 202 });
  const view = await untilSettled(runId);
  const call = service.calls.find((got) => got.body.run_id === runId);
  check(
    view.status === 'suspended' && view.pending[0]?.kind === 'tool' && call !== undefined,
    `release ${runId} waits on deploy/start: ${JSON.stringify(view)}`,
  );
  return { runId, name, call };
}

/** Delivers the tool's result; the run as it settles. */
async function deliver(run) {
  const posted = await service.deliver(run.call.body.callback_url, run.call.body.callback_token, { output: 'live' });
  check(posted.status === 200, `the result of ${run.runId}'s call is taken: ${JSON.stringify(posted)}`);
  return untilSettled(run.runId);
}

/** Completes a triage run (its remaining asks) and checks its result is what build A gives. */
async function completeTriage(run) {
  let view = run.answered ? await api('GET', `/runs/${run.runId}`) : await answer(run.runId, 'ann');
  view = await answer(run.runId, 'monday');
  check(view.status === 'completed' && view.result === `${run.topic}: ann, monday`, `triage ${run.runId} completes as under A: ${JSON.stringify(view)}`);
}

async function completeRelease(run) {
  const view = await deliver(run);
  check(
    view.status === 'completed' && view.result === `release of ${run.name}: live`,
    `release ${run.runId} completes on its own source: ${JSON.stringify(view)}`,
  );
}

/** Waits until the run index lists `count` suspended runs (the outbox writes it just after the runs suspend). */
async function untilListed(count) {
  for (let i = 0; i < 300; i++) {
    const listed = await api('GET', '/runs?status=suspended&limit=200');
    if (listed.runs.length === count) return;
    await sleep(100);
  }
  throw new Error(`the index never listed ${count} suspended runs`);
}

async function main() {
  const dirA = makeBuild('a', root, { triage: TRIAGE, release: RELEASE }, CONFIG);
  step('build A: serving');
  await serve(dirA);
  const empty = await deployCheck(dirA);
  check(
    empty.status === 0 && empty.stdout.includes('0 suspended runs checked: 0 reproduce their journal on this build, 0 would not'),
    `a deployment with no runs in flight: ${JSON.stringify(empty)}`,
  );
  step('deploy-check of a deployment with no suspended runs: exit 0');
  const first = { past: await triage('billing', true), asking: await triage('search', false), waiting: await release('api') };
  const second = {
    past: [await triage('ledger', true), await triage('inbox', true)],
    asking: await triage('export', false),
    waiting: [await release('web'), await release('worker')],
  };
  await untilListed(8);
  step('8 runs suspended under A: 4 triage runs past their first ask, 2 on it, 2 release runs on deploy/start');
  const buildA = (await api('GET', `/runs/${first.past.runId}`)).build;
  check(typeof buildA?.id === 'string', `the run view carries its build: ${JSON.stringify(buildA)}`);

  const refused = await deployCheck(dirA, [], 'not-the-key');
  check(
    refused.status === 1 && refused.stderr.includes(`${base} refused GET /runs?status=suspended&limit=200 (401)`),
    `a refused key: ${JSON.stringify(refused)}`,
  );
  step('deploy-check with a refused key says so (exit 1)');

  const dirB = makeBuild(
    'b',
    dirA,
    { triage: TRIAGE, release: RELEASE, 'hello-b': HELLO },
    `${CONFIG}  acme/other:
    http:
      url: http://127.0.0.1:9/other
      secret: \${RUNVIL_E2E_DEPLOY_SECRET}
    tools:
      - name: ping
        description: A tool no prompt uses.
`,
  );
  const checkB = await deployCheck(dirB);
  check(checkB.status === 0, `deploy-check from B passes: ${JSON.stringify(checkB)}`);
  check(
    checkB.stdout.includes('8 suspended runs checked: 8 reproduce their journal on this build, 0 would not') && !checkB.stdout.includes('would break'),
    `deploy-check from B reports every run reproducing: ${checkB.stdout}`,
  );
  check(!checkB.stdout.includes(`build ${buildA.id} `), `B is another build than A: ${checkB.stdout}`);
  step(`deploy-check from build B: exit 0 (${checkB.stdout.trim().split('\n').at(-1)})`);

  await serve(dirB);
  step('build B: serving on the same state');
  await completeTriage(first.past);
  await completeTriage(first.asking);
  await completeRelease(first.waiting);
  step('under B the first three runs complete as under A');
  await untilListed(5);

  const dirC = makeBuild(
    'c',
    dirB,
    { triage: TRIAGE, release: RELEASE.replace("'release of '", "'shipping '"), 'hello-b': HELLO },
    readFileSync(join(dirB, 'runvil.yaml'), 'utf8'),
  );
  const json = join(dirC, 'src/engine/lua/runtime/json.lua');
  const tweaked = readFileSync(json, 'utf8').replace('      return text\n    end,\n    decode', "      return text .. ' '\n    end,\n    decode");
  check(tweaked !== readFileSync(json, 'utf8'), 'the runtime change applies to json.lua');
  writeFileSync(json, tweaked);
  await new Promise((resolve, reject) =>
    spawn(process.execPath, [join(dirC, 'scripts/bundle-lua.mjs')], { cwd: dirC, stdio: 'inherit' }).once('close', (code) =>
      code === 0 ? resolve() : reject(new Error('bundle-lua failed')),
    ),
  );
  const checkC = await deployCheck(dirC);
  const broken = [...checkC.stdout.matchAll(/^would break: run (\S+) of (\S+)$/gm)].map((match) => match[1]).sort();
  const expected = second.past.map((run) => run.runId).sort();
  check(checkC.status === 1, `deploy-check from C exits 1: ${JSON.stringify(checkC)}`);
  check(JSON.stringify(broken) === JSON.stringify(expected), `deploy-check from C names exactly ${expected.join(', ')}: ${checkC.stdout}`);
  check(
    (
      checkC.stdout.match(/the run diverged from its journal at effect 1 of chain 0, in section "## Owner": the journal recorded a call of user-input\/ask/g) ??
      []
    ).length === 2,
    `each broken run's first differing step: ${checkC.stdout}`,
  );
  check(checkC.stdout.includes(`started on build ${buildA.id} (`), `the broken runs' build: ${checkC.stdout}`);
  check(
    checkC.stdout.includes('note: 2 runs of release started on another version of prompts/release.md; they finish on the source they started with'),
    `the edited prompt's runs are noted: ${checkC.stdout}`,
  );
  check(checkC.stdout.includes('5 suspended runs checked: 3 reproduce their journal on this build, 2 would not'), `the summary: ${checkC.stdout}`);
  check(checkC.stderr.includes('runvil: refusing: those 2 runs would fail with Determinism after this deploy'), `the refusal: ${checkC.stderr}`);
  const buildC = /on this checkout's build ([0-9a-f]{12}) /.exec(checkC.stdout)?.[1];
  step(`deploy-check from build C: exit 1, naming ${broken.join(' and ')}`);
  console.log(checkC.stdout);

  const forced = await deployCheck(dirC, ['--force']);
  check(
    forced.status === 0 && forced.stderr.includes('runvil: --force: going ahead; those 2 runs will fail with Determinism'),
    `--force: ${JSON.stringify(forced)}`,
  );
  step('deploy-check --force from C: exit 0, going ahead');

  await serve(dirC);
  step('build C: serving on the same state');
  for (const run of second.past) {
    const view = await answer(run.runId, 'monday');
    check(view.status === 'failed' && view.error?.kind === 'Determinism', `${run.runId} fails with Determinism: ${JSON.stringify(view)}`);
    const names = /the run started on build ([0-9a-f]{12}) \(.*\) and resumed on build ([0-9a-f]{12}) \(/.exec(view.error.message);
    check(names?.[1] === buildA.id && names?.[2] === buildC, `the error names build A and build C: ${view.error.message}`);
    check(view.error.message.includes('effect 1 of chain 0, in section "## Owner"'), `the error names the step: ${view.error.message}`);
  }
  await completeTriage(second.asking);
  for (const run of second.waiting) await completeRelease(run);
  step('under C the named runs fail with Determinism naming both builds; the others complete');
}

try {
  await main();
  console.log('e2e-deploy: ok');
} catch (error) {
  console.error(error);
  if (server) console.error(`--- server output ---\n${server.output.slice(-4000)}`);
  process.exitCode = 1;
} finally {
  await stop().catch(() => undefined);
  await service.close();
  rmSync(work, { recursive: true, force: true });
}
