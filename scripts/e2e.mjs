#!/usr/bin/env node
/**
 * `npm run e2e`: the end-to-end check with the real local server (`npm start`, workerd
 * through wrangler). It uploads a prompt that asks the operator twice, starts a run,
 * answers the first ask, kills the server (SIGKILL, as a crash) while the run waits on
 * the second, starts it again on the same persisted state, answers, and reads the
 * completed result, the run's file and its events. A second run is computing (a long Lua
 * loop) when the server is killed: with no request touching it, its alarm resumes it by
 * replay within seconds of the restart, and it completes with each of its effects once.
 * A third run waits on an HTTP tool service of this script's own (tool-service.mjs, on
 * loopback, named by a runvil.yaml the server bundles through RUNVIL_CONFIG): the service
 * verifies the signed call, answers 202, and posts the result after the restart; a call
 * whose result never comes fails at its deadline.
 * Then the inbox and notifications (scripts/e2e-inbox.mjs): the same runvil.yaml names a
 * notification receiver of the check's own on loopback as its notify targets. Then the
 * triggers (scripts/e2e-triggers.mjs): the same runvil.yaml holds a GitHub, a Stripe and a
 * Slack trigger, whose deliveries, signed as each sender signs, start their runs.
 *
 * MCP: the server runs with a runvil.yaml (RUNVIL_CONFIG) naming the MCP reference
 * server, started here on loopback: a prompt that declares it calls `echo` and `get-sum`
 * from Lua (wrapped as untrusted); a declared server that is down refuses the run with the
 * requirements notice; a server stopped during a call fails it with the message. The
 * command line (`runvil run --config --script`) offers the same tools to the scripted model.
 *
 * The first run's test file, fetched over HTTP (GET /runs/:id/test.yaml), passes
 * `runvil test` in a fresh folder, and a fork of it with the first answer changed completes
 * with what that answer leads to. So do the test files of the run whose HTTP tool waited, of
 * the MCP run and of a run that failed with a Lua error (scripts/e2e-replays.mjs), and each
 * forks at the end of its journal and at 0, ending as the run did. An MCP host authorizes
 * on /mcp with OAuth through the consent page, with the SDK's own OAuth client
 * (scripts/e2e-oauth.mjs). Offline; state in a fresh directory.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, killLocalServer, startLocalServer } from './local-server.mjs';
import { startToolService, TOOL_SERVICE_SECRET } from './tool-service.mjs';
import { checkInbox, NOTIFY_SECRET, notifyYaml, startReceiver } from './e2e-inbox.mjs';
import { check, e2eClient, sleep, step } from './e2e-client.mjs';
import { finishDeployRun, startDeployRun } from './e2e-callbacks.mjs';
import { checkForks, checkTestFile, journalLength as journalLengthOf } from './e2e-replays.mjs';
import { checkTriggers, TRIGGER_SECRETS, triggersYaml } from './e2e-triggers.mjs';
import { checkOAuth } from './e2e-oauth.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const token = randomBytes(16).toString('hex');
const stateDir = join(root, `.wrangler/e2e-state-${process.pid}`);
const port = Number(process.env.PORT || (await freePort()));
const base = `http://127.0.0.1:${port}`;
let server = null;
let log = '';
// A notification receiver of the check's own, named by the same runvil.yaml (scripts/e2e-inbox.mjs).
const receiver = await startReceiver();
let mcp = null;
const configFile = join(root, `.wrangler/e2e-runvil-${process.pid}.yaml`);
const scriptFile = join(root, `.wrangler/e2e-script-${process.pid}.yaml`);
const promptFile = join(root, `.wrangler/e2e-mcp-${process.pid}.md`);

/** Starts the MCP reference server on a free loopback port, in its own process group. */
async function startMcpServer() {
  const mcpPort = await freePort();
  const entry = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const child = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { PATH: process.env.PATH, PORT: String(mcpPort) },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let said = '';
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      said += chunk;
      if (said.includes('listening on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the MCP server exited (${code}): ${said}`)));
  });
  return { child, url: `http://127.0.0.1:${mcpPort}/mcp` };
}

async function stopMcpServer() {
  if (!mcp || mcp.child.exitCode !== null || mcp.child.signalCode !== null) return;
  const exited = new Promise((resolve) => mcp.child.once('exit', resolve));
  try {
    process.kill(-mcp.child.pid, 'SIGTERM');
  } catch {}
  await exited;
}

// The deployment's runvil.yaml names the tool service (its secret comes from the environment),
// the MCP reference server and a down one (written by main() once the MCP server listens),
// and the notification receiver.
const service = await startToolService();

/** Writes the check's runvil.yaml; npm start bundles the file RUNVIL_CONFIG names. */
function writeConfig(mcpUrl, downUrl) {
  writeFileSync(
    configFile,
    `packs:
  acme/deploy:
    http:
      url: ${service.url}
      secret: \${RUNVIL_E2E_DEPLOY_SECRET}
    trusted: true
    tools:
      - name: start
        description: Start a deploy and wait until it is live.
        parameters: { type: object, properties: { service: { type: string } }, required: [service] }
      - name: quick
        description: A deploy that must report within 2 seconds.
        timeout: 2
  everything/demo:
    description: The MCP reference server
    mcp: { url: "${mcpUrl}" }
  everything/down:
    mcp: { url: "${downUrl}" }
${notifyYaml(receiver)}${triggersYaml()}`,
  );
}
process.env.RUNVIL_E2E_DEPLOY_SECRET = TOOL_SERVICE_SECRET;

async function startServer() {
  server = await startLocalServer({
    port,
    token,
    stateDir,
    // The notification retry schedule scaled down (50 ms, 300 ms, 3 s...): the flaky receiver's three failures take 3.35 s.
    env: { RUNVIL_NOTIFY_SECRET: NOTIFY_SECRET, RUNVIL_NOTIFY_RETRY_SCALE: '0.005', ...TRIGGER_SECRETS },
  });
}

async function killServer() {
  log = server?.output ?? log;
  await killLocalServer(server);
  server = null;
}

const PROMPT = `---
name: e2e-intake
description: Asks twice and files the answers.
runvil: 0
uses: [user-input]
args:
  topic: { type: string }
---
# E2E intake

## Ask
\`\`\`lua
var.owner = tools.call('user-input/ask', { question = 'Who owns ' .. args.topic .. '?' })
store.write('answers.txt', 'owner=' .. var.owner .. '\\n')
var.date = tools.call('user-input/ask', { question = 'When does ' .. args.topic .. ' ship?' })
store.append('answers.txt', 'date=' .. var.date .. '\\n')
return args.topic .. ': ' .. var.owner .. ', ' .. var.date
\`\`\`
`;

/** Computes for a second or two, appending to a file after each stretch: running, with effects journaled, when the server is killed. */
const SPIN_STEPS = 30;
const SPIN = `---
name: e2e-spin
description: Computes for a while.
runvil: 0
---
# E2E spin

## Spin
\`\`\`lua
local total = 0
for k = 1, ${SPIN_STEPS} do
  for i = 1, 400000 do total = total + i % 7 end
  store.append('progress.txt', k .. '\\n')
end
store.write('done.txt', tostring(total))
return 'spun ' .. total
\`\`\`
`;

const { api, fetchText, untilSettled } = e2eClient(base, token);
const replays = { api, untilSettled, root };

/** Fails with a Lua error: its test file expects the error as the run named it. */
const FAILS = `---
name: e2e-fails
description: Fails with a Lua error.
runvil: 0
---
# E2E fails

## Fail
\`\`\`lua
local missing = nil
return missing.field
\`\`\`
`;

async function main() {
  mcp = await startMcpServer();
  const downUrl = `http://127.0.0.1:${await freePort()}/mcp`;
  writeConfig(mcp.url, downUrl);
  // npm start bundles the file RUNVIL_CONFIG names (wrangler's build runs with this environment).
  process.env.RUNVIL_CONFIG = configFile;
  step(`the MCP reference server listens at ${mcp.url}; runvil.yaml names it`);
  step(`starting the server on ${base}`);
  await startServer();
  await api('PUT', '/prompts/e2e-intake', { body: PROMPT, expect: 201 });
  step('uploaded prompt e2e-intake');
  const { run_id: runId } = await api('POST', '/prompts/e2e-intake/runs', { body: { args: { topic: 'the release' } }, expect: 202 });
  step(`started run ${runId}`);
  const first = await untilSettled(runId);
  check(first.status === 'suspended' && first.pending[0]?.question === 'Who owns the release?', `first ask pending: ${JSON.stringify(first)}`);
  await api('POST', `/runs/${runId}/asks/${first.pending[0].ask_id}`, { body: { answer: 'Ada' }, bearer: first.pending[0].token });
  const second = await untilSettled(runId);
  check(second.status === 'suspended' && second.pending[0]?.question === 'When does the release ship?', `second ask pending: ${JSON.stringify(second)}`);
  step(`answered the first ask; the run waits on ask ${second.pending[0].ask_id}`);

  await api('PUT', '/prompts/e2e-spin', { body: SPIN, expect: 201 });
  const { run_id: spinId } = await api('POST', '/prompts/e2e-spin/runs', { body: {}, expect: 202 });
  let before = '';
  for (let i = 0; i < 300 && before === ''; i++) {
    before = await fetchText(`/runs/${spinId}/files/progress.txt`);
    if (before === '') await sleep(20);
  }
  check(before !== '' && before.split('\n').length - 1 < SPIN_STEPS, `run ${spinId} is part way through when the server is killed: ${JSON.stringify(before)}`);

  const deployCheck = { api, untilSettled, service, base, token };
  const deploy = await startDeployRun(deployCheck);

  await killServer();
  step(
    `killed the server (SIGKILL) while the first run waits and run ${spinId} computes (${before.split('\n').length - 1} of ${SPIN_STEPS} steps); starting it again`,
  );
  await startServer();
  const ready = Date.now();
  // Nothing asks for the spinning run but its files, which do not wake a run: its alarm must.
  let total = '';
  for (let i = 0; i < 300 && total === ''; i++) {
    total = await fetchText(`/runs/${spinId}/files/done.txt`);
    if (total === '') await sleep(50);
  }
  const looked = Date.now();
  const spun = await api('GET', `/runs/${spinId}`);
  check(spun.status === 'completed' && spun.result === `spun ${total}`, `run ${spinId} completed after the restart: ${JSON.stringify(spun)}`);
  const endedAfter = Date.parse(spun.ended_at) - ready;
  check(endedAfter < 6_000 && Date.parse(spun.ended_at) <= looked, `run ${spinId} completed ${endedAfter} ms after the restart, with no request (within 6 s)`);
  const progress = await api('GET', `/runs/${spinId}/files/progress.txt`);
  check(progress === Array.from({ length: SPIN_STEPS }, (_, k) => `${k + 1}\n`).join(''), `each step appended once: ${JSON.stringify(progress)}`);
  step(`run ${spinId} resumed on its own and completed ${endedAfter} ms after the server was back, each step once`);
  await finishDeployRun(deployCheck, deploy);
  // The run whose HTTP tool waited (202, then the callback) as a test, and forked: a fork from the start waits on its own call.
  const deployed = await checkTestFile(replays, deploy.runId, 'deploy');
  await checkForks(
    replays,
    deploy.runId,
    deployed,
    (view) => view.status === 'completed' && view.result === 'ok: live at v42',
    async (forkId) => {
      let call;
      for (let i = 0; i < 300 && !call; i++) {
        call = service.calls.find((got) => got.body.run_id === forkId);
        if (!call) await sleep(20);
      }
      check(call !== undefined, `the fork ${forkId} called the tool service itself`);
      await service.deliver(call.body.callback_url, call.body.callback_token, { output: 'live at v42' });
    },
  );
  const again = await api('GET', `/runs/${runId}`);
  check(JSON.stringify(again) === JSON.stringify(second), `the run is as it was before the restart: ${JSON.stringify(again)}`);
  const listed = await api('GET', '/prompts');
  check(
    listed.prompts.some((p) => p.name === 'e2e-intake' && p.origin === 'uploaded'),
    'the uploaded prompt survived the restart',
  );

  // The first ask's token opens no other ask, and a wrong credential gets the same 401 for a run that exists and one that does not.
  await api('POST', `/runs/${runId}/asks/${again.pending[0].ask_id}`, { body: { answer: 'Eve' }, bearer: first.pending[0].token, expect: 401 });
  const refusals = await Promise.all(
    [runId, 'e'.repeat(64)].map((id) => api('POST', `/runs/${id}/asks/0-1`, { body: { answer: 'x' }, bearer: 'f'.repeat(64), expect: 401 })),
  );
  check(JSON.stringify(refusals[0]) === JSON.stringify(refusals[1]), `no existence oracle: ${JSON.stringify(refusals)}`);
  await api('GET', `/runs/${runId}/files/%E0%A4%A`, { expect: 400 });
  const answered = await api('POST', `/runs/${runId}/asks/${again.pending[0].ask_id}?wait=5`, {
    body: { answer: 'Friday', answered_by: 'e2e' },
    bearer: again.pending[0].token,
  });
  check(
    JSON.stringify(Object.keys(answered)) === '["ask","run"]' && answered.ask.status === 'answered' && !JSON.stringify(answered).includes('"result"'),
    `the ask token's response shows its ask and the run's status only: ${JSON.stringify(answered)}`,
  );
  const done = await untilSettled(runId);
  check(done.status === 'completed' && done.result === 'the release: Ada, Friday', `completed with the result: ${JSON.stringify(done)}`);
  step(`the run completed after the restart: ${JSON.stringify(done.result)}`);
  const file = await api('GET', `/runs/${runId}/files/answers.txt`);
  check(file === 'owner=Ada\ndate=Friday\n', `the run's file: ${JSON.stringify(file)}`);
  const events = (await api('GET', `/runs/${runId}/events`))
    .split('\n\n')
    .filter((block) => block.startsWith('id: '))
    .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)));
  const types = events.map((e) => e.type);
  check(types[0] === 'run_started' && types.at(-1) === 'run_completed', `events from start to end: ${types.join(',')}`);
  check(
    types.filter((t) => t === 'ask_pending').length === 2 && types.filter((t) => t === 'run_resumed').length === 2,
    `two asks, two resumes: ${types.join(',')}`,
  );
  check(
    events.every((e, i) => e.seq === i + 1),
    'events numbered 1..n',
  );
  await api('POST', `/runs/${runId}/asks/${again.pending[0].ask_id}`, { body: { answer: 'again' }, expect: 409 });
  await api('POST', `/runs/${runId}/asks/${again.pending[0].ask_id}`, { body: { answer: 'Friday' }, bearer: again.pending[0].token });
  step(`read the file and ${events.length} events; the same answer again gets 200, another 409`);

  // The run as a test file: fetched over HTTP and run by `runvil test` in a folder of its own, offline.
  const testFile = await checkTestFile(replays, runId, 'intake');

  // A fork at the end of its journal with the first answer changed: the rest of the journal is stale, and goes on live.
  const journalLength = journalLengthOf(testFile);
  const forked = await api('POST', `/runs/${runId}/fork?wait=10`, { body: { at: journalLength, answers: { [first.pending[0].ask_id]: 'Eve' } } });
  check(
    forked.forked_from?.run_id === runId && forked.forked_from.at === journalLength && forked.status === 'suspended',
    `the fork waits on the second ask again: ${JSON.stringify(forked)}`,
  );
  await api('POST', `/runs/${forked.run_id}/asks/${forked.pending[0].ask_id}?wait=10`, { body: { answer: 'Monday' }, bearer: forked.pending[0].token });
  const forkDone = await untilSettled(forked.run_id);
  check(
    forkDone.status === 'completed' && forkDone.result === 'the release: Eve, Monday',
    `the fork completed with the changed answers: ${JSON.stringify(forkDone)}`,
  );
  step(`forked run ${runId} at ${journalLength} with another first answer: ${JSON.stringify(forkDone.result)}`);

  // A start whose response was lost, retried with its Idempotency-Key, reaches the same run.
  const keyed = async () =>
    await fetch(`${base}/prompts/e2e-intake/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'e2e-retry-1' },
      body: JSON.stringify({ args: { topic: 'the retry' } }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  const [a, b] = [await keyed(), await keyed()];
  check(a.status === 202 && b.status === 200 && b.body.duplicate === true && a.body.run_id === b.body.run_id, `Idempotency-Key: ${JSON.stringify([a, b])}`);
  step('a start retried with the same Idempotency-Key reached the same run');

  // A run that failed with a Lua error as a test: the error it expects names the chunk as the replay does.
  await api('PUT', '/prompts/e2e-fails', { body: FAILS, expect: 201 });
  const { run_id: failsId } = await api('POST', '/prompts/e2e-fails/runs', { body: {}, expect: 202 });
  const failed = await untilSettled(failsId);
  check(
    failed.status === 'failed' && failed.error.kind === 'Lua' && failed.error.message.startsWith('e2e-fails.md:'),
    `the run failed with a Lua error: ${JSON.stringify(failed)}`,
  );
  const failsFile = await checkTestFile(replays, failsId, 'fails');
  await checkForks(replays, failsId, failsFile, (view) => view.status === 'failed' && JSON.stringify(view.error) === JSON.stringify(failed.error));
  await checkInbox({ api, base, step, check }, receiver);
  await checkTriggers({ api, base, step, check, untilSettled });
  await checkOAuth({ api, base, step, check });
  await mcpChecks();
}

const mcpPrompt = (name, uses, lua) =>
  `---\nname: ${name}\ndescription: Calls the MCP reference server.\nruntime: 0\nuses: [${uses}]\n---\n# MCP\n\n## Call\n\`\`\`lua\n${lua}\n\`\`\`\n`.replace(
    'runtime',
    'runvil',
  );

async function mcpRun(name, uses, lua) {
  await api('PUT', `/prompts/${name}`, { body: mcpPrompt(name, uses, lua), expect: 201 });
  const { run_id: id } = await api('POST', `/prompts/${name}/runs`, { body: {}, expect: 202 });
  return id;
}

async function mcpChecks() {
  const packs = await api('GET', '/packs');
  const demo = packs.packs.find((p) => p.name === 'everything/demo');
  check(
    demo?.available === true && demo.tools.some((t) => t.id === 'demo/echo'),
    `GET /packs lists the MCP Pack and its tools: ${JSON.stringify(demo)?.slice(0, 300)}`,
  );
  const down = packs.packs.find((p) => p.name === 'everything/down');
  check(
    down?.available === false && /^the MCP server did not answer/.test(down.reason),
    `GET /packs says why the down Pack cannot serve: ${JSON.stringify(down)}`,
  );

  const echoId = await mcpRun(
    'e2e-mcp',
    'everything/demo',
    "return tools.call('demo/echo', { message = 'e2e' }) .. '|' .. tools.call('demo/get-sum', { a = 2, b = 3 })",
  );
  const echoed = await untilSettled(echoId);
  const wrapped =
    /^.*<untrusted_input_([0-9a-f]+)>\nEcho: e2e\n<\/untrusted_input_\1>\|.*<untrusted_input_([0-9a-f]+)>\nThe sum of 2 and 3 is 5\.\n<\/untrusted_input_\2>$/s;
  check(echoed.status === 'completed' && wrapped.test(echoed.result), `echo and get-sum from Lua, wrapped as untrusted: ${JSON.stringify(echoed)}`);
  step('a prompt declaring everything/demo called echo and get-sum on the MCP server, wrapped as untrusted');
  // The run of the MCP Pack as a test (the Pack in host.packs as the run kept its tools) and forked.
  const echoFile = await checkTestFile(replays, echoId, 'mcp');
  await checkForks(replays, echoId, echoFile, (view) => view.status === 'completed' && view.result === echoed.result);

  const refusedId = await mcpRun('e2e-mcp-down', 'everything/down', "return 'never'");
  const refused = await untilSettled(refusedId);
  check(
    refused.status === 'failed' &&
      refused.error.kind === 'RequirementsUnmet' &&
      /^the environment cannot satisfy this prompt:\n- down is unavailable: the MCP server did not answer/.test(refused.error.message),
    `a server down at prepare: ${JSON.stringify(refused)}`,
  );
  step('a prompt declaring a Pack whose server is down was refused with the requirements notice');
  // Its test file gives the Pack the reason it could not serve, and its forks keep that tool list (none) as the run did.
  const refusedFile = await checkTestFile(replays, refusedId, 'mcp-down');
  await checkForks(replays, refusedId, refusedFile, (view) => view.status === 'failed' && view.error.message === refused.error.message);

  // The command line offers the same tools to the scripted model.
  writeFileSync(
    promptFile,
    mcpPrompt('e2e-cli', 'everything/demo', "tools.offer({ 'demo/echo', 'demo/get-sum' })\nmessages:user('use them')\nreturn models.loop()"),
  );
  writeFileSync(
    scriptFile,
    'model:\n  - tool_calls:\n      - { id: c1, name: demo_echo, arguments: { message: from the model } }\n      - { id: c2, name: demo_get-sum, arguments: { a: 40, b: 2 } }\n  - content: done\n',
  );
  // Asynchronously: a blocked event loop would let the server's idle keep-alive sockets go stale under fetch.
  const cli = await new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'bin/runvil.mjs'), 'run', promptFile, '--config', configFile, '--script', scriptFile, '--json'],
      { cwd: root },
      (_error, stdout, stderr) => resolve({ stdout, stderr }),
    );
  });
  const ran = JSON.parse(cli.stdout || '{}');
  const results = (ran.events ?? []).filter((e) => e.type === 'tool_result').map((e) => JSON.stringify(e));
  check(
    ran.status === 'completed' &&
      results.length === 2 &&
      /untrusted_input_[0-9a-f]+>\\nEcho: from the model\\n/.test(results[0]) &&
      /The sum of 40 and 2 is 42\./.test(results[1]),
    `runvil run offered the MCP tools to the scripted model: ${cli.stdout.slice(0, 400)} ${cli.stderr}`,
  );
  step('runvil run --config offered echo and get-sum to the scripted model, and ran its calls');

  const slowId = await mcpRun(
    'e2e-mcp-stop',
    'everything/demo',
    "local ok, err = pcall(tools.call, 'demo/trigger-long-running-operation', { duration = 5, steps = 5 })\nreturn tostring(ok) .. '|' .. tostring(err)",
  );
  // The call reports progress every second for 5 s: stop the server part way through.
  await sleep(1500);
  const midway = await api('GET', `/runs/${slowId}`);
  check(midway.status === 'running', `the call is under way when the MCP server stops: ${JSON.stringify(midway)}`);
  await stopMcpServer();
  const stopped = await untilSettled(slowId);
  check(
    stopped.status === 'completed' &&
      /^false\|tool call failure: demo\/trigger-long-running-operation: the MCP server did not answer \(.+\)$/.test(stopped.result),
    `a server stopped during a call: ${JSON.stringify(stopped)}`,
  );
  step(`the MCP server stopped during a call: ${JSON.stringify(stopped.result)}`);
}

try {
  await main();
  console.log('e2e: ok');
} catch (error) {
  console.error(`e2e: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  console.error('--- server output ---');
  console.error((server?.output ?? log).slice(-6000));
  process.exitCode = 1;
} finally {
  await killServer().catch(() => undefined);
  await receiver.close();
  await service.close();
  await stopMcpServer().catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  for (const file of [configFile, scriptFile, promptFile]) rmSync(file, { force: true });
  delete process.env.RUNVIL_CONFIG;
}
