#!/usr/bin/env node
/**
 * `npm run e2e:mcp`: a deployed prompt called over /mcp of the real local server by clients
 * no one here wrote. The prompt (e2e-mcp-intake) asks the operator twice, the first time
 * with choices:
 *
 * - the MCP SDK's v2 client (@modelcontextprotocol/client) on 2025-11-25 with the elicitation
 *   capability: each ask arrives as an `elicitation/create` request on the call's stream,
 *   the choices as the field's enum; the handler's answers complete the run;
 * - the same client pinned to 2026-07-28: each ask arrives as an `input_required` result with
 *   a `requestState`, which the client fulfils through the same handler and sends back;
 * - each again with the server killed (SIGKILL, as a crash) and started on the same state
 *   between the second question and its answer, the answer given after the restart: on
 *   2026-07-28 the retry's requestState names the run; on 2025-11-25 the session object kept
 *   the session and the question in its storage, so the client's answer, sent on the same
 *   session, continues the call, whose result arrives on the client's standalone stream,
 *   which it opened again after the restart. Either way the call's result is the run's and
 *   both asks were answered by the MCP caller;
 * - the user's other answers, on 2026-07-28: one outside the choices is refused with the
 *   protocol's error naming them and answers nothing; a declined question answers nothing
 *   and the call returns the pending ask (its question and answer_url);
 * - @modelcontextprotocol/inspector-cli (the MCP Inspector's command line), which offers no
 *   elicitation: tools/list, and tools/call of a prompt that does not ask (`hello`); its call
 *   of the prompt that asks answers with the pending ask (question, choices, answer_url),
 *   which is then answered over the REST API as a person elsewhere would.
 *
 * The clients call with a key of their own (POST /keys), whose scopes run the check's two
 * prompts and answer their asks: tools/list lists those two and no other. After each call,
 * GET /runs lists the run, completed with the result the client received, and its asks
 * (GET /asks?status=answered) say who answered: `mcp:<the client's name>`.
 * Offline; state in a fresh directory.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { freePort, killLocalServer, startLocalServer } from './local-server.mjs';
import { check, e2eClient, sleep } from './e2e-client.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const token = randomBytes(16).toString('hex');
const stateDir = join(root, `.wrangler/e2e-mcp-state-${process.pid}`);
const port = await freePort();
const inspectorDir = join(root, 'node_modules/@modelcontextprotocol/inspector-cli/build');
let server = null;
let log = '';
/** The key the MCP clients call with (POST /keys): it may run the two prompts of the check and answer their asks, nothing else. */
let agentKey = null;
const AGENT_SCOPES = ['runs:start:e2e-mcp-intake', 'runs:start:hello', 'asks:answer:e2e-mcp-intake'];

/** Prints one step of the check. */
const step = (text) => console.log(`e2e-mcp: ${text}`);

const PROMPT = `---
name: e2e-mcp-intake
description: Asks who owns a topic (from a list) and when it ships, and files both.
runvil: 0
uses: [user-input]
args:
  topic: { type: string, description: What to ask about }
---
# MCP intake

## Ask
\`\`\`lua
local owner = tools.call('user-input/ask', { question = 'Who owns ' .. args.topic .. '?', choices = { 'ada', 'grace', 'linus' } })
local date = tools.call('user-input/ask', { question = 'When does ' .. args.topic .. ' ship?' })
store.write('answers.txt', 'owner=' .. owner .. '\\ndate=' .. date .. '\\n')
return args.topic .. ': ' .. owner .. ', ' .. date
\`\`\`
`;

async function startServer() {
  server = await startLocalServer({ port, token, stateDir });
}

async function restartServer() {
  log = server?.output ?? log;
  await killLocalServer(server);
  server = null;
  await startServer();
}

const { api, untilSettled } = e2eClient(`http://127.0.0.1:${port}`, token);

/**
 * The SDK's v2 client on `era` ('2025-11-25', or '2026-07-28' pinned), named `name`, answering
 * each elicitation with `answerOf(request)` (after `beforeAnswer`, if given). It records the
 * elicitations it was sent, and the bodies of the answers it received (to see input_required).
 */
async function sdkClient(name, era) {
  const elicitations = [];
  const bodies = [];
  const recordingFetch = async (url, init) => {
    const response = await fetch(url, init);
    if (response.headers.get('content-type')?.includes('json')) bodies.push(await response.clone().text());
    return response;
  };
  const client = new Client(
    { name, version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} } },
      ...(era === '2026-07-28' ? { versionNegotiation: { mode: { pin: era } } } : {}),
    },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${agentKey}` } },
    fetch: recordingFetch,
    // A client that outlives a server's restart keeps trying to open its stream again (the SDK's default gives up after two tries, 2.5 s).
    reconnectionOptions: { initialReconnectionDelay: 250, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 240 },
  });
  await client.connect(transport);
  return { client, elicitations, bodies };
}

/** The field an elicitation asks for, and its enum if it has one. */
function fieldOf(request) {
  const properties = request.params.requestedSchema?.properties ?? {};
  const [field] = Object.keys(properties);
  return { field, enum: properties[field]?.enum ?? null };
}

/**
 * Calls e2e-mcp-intake over MCP as `name` on `era`, answering the owner from the choices and
 * the date as free text; `restartBeforeSecondAnswer` kills and restarts the server between
 * the second question and its answer. Checks the questions, the result and the run.
 */
async function callIntake(name, era, topic, { restartBeforeSecondAnswer = false } = {}) {
  const { client, elicitations, bodies } = await sdkClient(name, era);
  check(client.getNegotiatedProtocolVersion() === era, `${name} negotiated ${era}: ${client.getNegotiatedProtocolVersion()}`);
  const tools = await client.listTools();
  const tool = tools.tools.find((listed) => listed.name === 'e2e-mcp-intake');
  check(tool?.inputSchema?.properties?.topic?.type === 'string', `tools/list serves the prompt with its args: ${JSON.stringify(tool)}`);
  client.setRequestHandler('elicitation/create', async (request) => {
    elicitations.push(request.params);
    const { field, enum: choices } = fieldOf(request);
    if (elicitations.length === 2 && restartBeforeSecondAnswer) {
      await restartServer();
      step(`${name}: the server was killed and started again between the second question and its answer`);
    }
    return { action: 'accept', content: { [field]: choices ? choices[1] : 'friday' } };
  });
  const result = await client.callTool({ name: 'e2e-mcp-intake', arguments: { topic } });
  await client.close().catch(() => undefined);
  const text = result.content?.find((block) => block.type === 'text')?.text;
  check(!result.isError && text === `${topic}: grace, friday`, `${name}: the call's result is the run's: ${JSON.stringify(result)}`);
  check(
    elicitations.length === 2 && elicitations[0].message === `Who owns ${topic}?` && elicitations[1].message === `When does ${topic} ship?`,
    `${name}: the two asks arrived as elicitations: ${JSON.stringify(elicitations)}`,
  );
  check(
    JSON.stringify(fieldOf({ params: elicitations[0] }).enum) === '["ada","grace","linus"]',
    `${name}: the first ask's choices are the field's enum: ${JSON.stringify(elicitations[0])}`,
  );
  if (era === '2026-07-28') {
    const required = bodies.filter((body) => body.includes('"input_required"') && body.includes('"requestState"'));
    check(required.length >= 2, `${name}: each ask came as input_required with a requestState: ${JSON.stringify(bodies)}`);
  }
  return await runOf(`mcp:${name}`, text);
}

/**
 * The user's other answers, on 2026-07-28: one outside the choices is refused (the call fails
 * with the protocol's error naming the choices) and answers nothing; a declined question
 * answers nothing either, and the call returns the pending ask, which the inbox then answers.
 */
async function refusedAndDeclined(name, topic) {
  const { client } = await sdkClient(name, '2026-07-28');
  let reply = { action: 'accept', content: { answer: 'mallory' } };
  client.setRequestHandler('elicitation/create', async () => reply);
  const refused = await client.callTool({ name: 'e2e-mcp-intake', arguments: { topic } }).then(
    (result) => ({ result }),
    (error) => ({ error }),
  );
  check(
    refused.error !== undefined && /ada/.test(String(refused.error.message ?? '') + JSON.stringify(refused.error.data ?? '')),
    `${name}: an answer outside the choices is refused, naming them: ${JSON.stringify(refused)}`,
  );
  reply = { action: 'decline' };
  const declined = await client.callTool({ name: 'e2e-mcp-intake', arguments: { topic: `${topic}-declined` } });
  await client.close().catch(() => undefined);
  const pending = declined.structuredContent?.pending ?? [];
  check(
    !declined.isError && pending.length === 1 && pending[0].question === `Who owns ${topic}-declined?` && typeof pending[0].answer_url === 'string',
    `${name}: a declined question returns the pending ask: ${JSON.stringify(declined)}`,
  );
  const runId = declined.structuredContent.run_id;
  check((await api('GET', `/runs/${runId}`)).status === 'suspended', `${name}: the declined run waits on its ask`);
  // The index (GET /asks) is written by the run object's outbox, after the fact: it finds the
  // refused run; the run itself (GET /runs/:id) says whether its ask is still open.
  let refusedAsk;
  for (let i = 0; i < 100 && refusedAsk === undefined; i++) {
    refusedAsk = (await api('GET', '/asks?prompt=e2e-mcp-intake&limit=100')).asks.find((ask) => ask.question === `Who owns ${topic}?`);
    if (refusedAsk === undefined) await sleep(100);
  }
  check(refusedAsk !== undefined, `${name}: GET /asks lists the ask whose answer was refused`);
  const refusedRun = await api('GET', `/runs/${refusedAsk.run_id}`);
  const stillPending = refusedRun.pending.filter((ask) => ask.ask_id === refusedAsk.ask_id);
  check(
    refusedRun.status === 'suspended' && stillPending.length === 1,
    `${name}: the refused answer answered nothing: the run still waits on the ask: ${JSON.stringify(refusedRun)}`,
  );
  return runId;
}

/** The run of e2e-mcp-intake that answered `result`: listed by GET /runs, completed, its two asks answered by `answeredBy`. */
async function runOf(answeredBy, result) {
  let runId = null;
  for (let i = 0; i < 100 && runId === null; i++) {
    const { runs } = await api('GET', '/runs?prompt=e2e-mcp-intake&limit=100');
    for (const run of runs) {
      if (runId === null && (await api('GET', `/runs/${run.run_id}`)).result === result) runId = run.run_id;
    }
    if (runId === null) await sleep(100);
  }
  check(runId !== null, `GET /runs lists the run that answered ${JSON.stringify(result)}`);
  const view = await untilSettled(runId);
  check(view.status === 'completed' && view.result === result, `the run completed with the result the client saw: ${JSON.stringify(view)}`);
  let asks = [];
  for (let i = 0; i < 100; i++) {
    asks = (await api('GET', `/asks?status=answered&prompt=e2e-mcp-intake&limit=100`)).asks.filter((ask) => ask.run_id === runId);
    if (asks.length === 2) break;
    await sleep(100);
  }
  check(asks.length === 2 && asks.every((ask) => ask.answered_by === answeredBy), `the run's two asks were answered by ${answeredBy}: ${JSON.stringify(asks)}`);
  return runId;
}

/** Runs the MCP Inspector's command line against /mcp; resolves with its parsed JSON output. */
async function inspector(...args) {
  // Run from its build folder: 1.0.3 reads its own package.json at a path relative to the working directory.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['index.js', `http://127.0.0.1:${port}/mcp`, '--header', `Authorization: Bearer ${agentKey}`, ...args],
    { cwd: inspectorDir, timeout: 60_000 },
  );
  return JSON.parse(stdout);
}

async function checkInspector() {
  const listed = await inspector('--method', 'tools/list');
  const names = listed.tools.map((tool) => tool.name);
  check(
    JSON.stringify(names.sort()) === '["e2e-mcp-intake","hello"]',
    `inspector-cli's tools/list has the prompts the key may run, not intake: ${JSON.stringify(names)}`,
  );
  const hello = await inspector('--method', 'tools/call', '--tool-name', 'hello', '--tool-arg', 'name=Ada');
  check(/^Hello, Ada!/.test(hello.content?.[0]?.text ?? ''), `inspector-cli called hello: ${JSON.stringify(hello)}`);
  step(`inspector-cli listed the tools (${names.join(', ')}) and called hello: ${JSON.stringify(hello.content[0].text)}`);

  // It offers no elicitation: the call answers with the pending ask, answered elsewhere (here, over REST).
  const pending = await inspector('--method', 'tools/call', '--tool-name', 'e2e-mcp-intake', '--tool-arg', 'topic=delta');
  const text = JSON.stringify(pending);
  const answerUrl = /"answer_url":\s*"([^"]+)"|answer_url\\?":\s*\\?"([^"\\]+)/.exec(text);
  check(text.includes('Who owns delta?') && answerUrl !== null, `inspector-cli's call answered with the pending ask: ${text}`);
  const url = new URL(answerUrl[1] ?? answerUrl[2]);
  await api('POST', url.pathname, { body: { answer: 'ada', answered_by: 'inspector-operator' } });
  const runId = url.pathname.split('/')[2];
  for (let i = 0; i < 100; i++) {
    const view = await api('GET', `/runs/${runId}`);
    const second = view.pending?.find((ask) => ask.question === 'When does delta ship?');
    if (second) {
      await api('POST', `/runs/${runId}/asks/${second.ask_id}`, { body: { answer: 'monday', answered_by: 'inspector-operator' } });
      break;
    }
    await sleep(100);
  }
  await runOf('inspector-operator', 'delta: ada, monday');
  step(`inspector-cli (no elicitation) got the pending ask of run ${runId} as its result; answered over REST, the run completed`);
}

try {
  await startServer();
  await api('PUT', '/prompts/e2e-mcp-intake', { body: PROMPT, expect: 201 });
  agentKey = (await api('POST', '/keys', { body: { name: 'e2e-mcp-agent', scopes: AGENT_SCOPES }, expect: 201 })).key;
  step(`the MCP clients call with a key of scopes ${AGENT_SCOPES.join(', ')}`);
  for (const era of ['2025-11-25', '2026-07-28']) {
    const runId = await callIntake(`e2e-sdk-${era}`, era, `alpha-${era}`);
    step(
      `the SDK's v2 client on ${era} answered both asks of run ${runId} (${era === '2026-07-28' ? 'input_required' : 'elicitation/create'}); answered_by mcp:e2e-sdk-${era}`,
    );
  }
  for (const era of ['2026-07-28', '2025-11-25']) {
    const restarted = await callIntake(`e2e-sdk-restart-${era}`, era, `beta-${era}`, { restartBeforeSecondAnswer: true });
    step(
      `the SDK's v2 client on ${era} answered run ${restarted}'s second ask after the server restarted (${era === '2026-07-28' ? 'its requestState carried the run' : 'its session and question were in the session object'}); the run completed, answered_by mcp:e2e-sdk-restart-${era}`,
    );
  }
  const declined = await refusedAndDeclined('e2e-sdk-other-answers', 'gamma');
  step(`on 2026-07-28 an answer outside the choices was refused and answered nothing; a declined question returned run ${declined}'s pending ask`);
  await checkInspector();
  console.log('e2e-mcp: ok');
} catch (error) {
  console.error(`e2e-mcp: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  console.error('--- server output ---');
  console.error((server?.output ?? log).slice(-6000));
  process.exitCode = 1;
} finally {
  await killLocalServer(server).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
}
