#!/usr/bin/env node
/**
 * `npm run mcp:conformance`: the MCP project's own conformance suite
 * (@modelcontextprotocol/conformance, `conformance server`) against the real local server's
 * /mcp. The server runs with test/mcp-conformance/runvil.yaml (RUNVIL_CONFIG), whose
 * `mcp.tools` maps the suite's tool names (test_simple_text, test_elicitation, ...) to the
 * prompts of test/mcp-conformance/prompts/, uploaded here: the elicitation scenarios are served
 * by prompts that ask the operator with forms. Every scenario a deployment of prompts can serve
 * must pass; the rest are listed, each with its reason, in
 * test/mcp-conformance/expected-failures.yaml, and a listed one that passes fails the run too.
 *
 * The suite's client sends no credentials (it takes only a URL), while /mcp needs a bearer key
 * (one made here with POST /keys, of scopes runs:start:*, asks:answer:* and runs:read): it
 * reaches the server through a loopback proxy of this script's own that adds the key, as an
 * MCP host's configuration does, and passes everything else through as sent (its own address
 * in Host and Origin becomes the server's, as a reverse proxy's does; any other Host or Origin
 * reaches the server as the suite wrote it, for the DNS-rebinding scenario).
 *
 * Then the suite's client scenarios that apply to a host (CLIENT_SCENARIOS), with Runvil's MCP
 * Pack as the client: `conformance client --command` runs scripts/mcp-conformance-client.mjs,
 * which runs `runvil run` of the scenario's prompt (test/mcp-conformance/client/) with a
 * runvil.yaml naming the scenario's server as a Pack; the file's `client:` section lists those
 * that are expected to fail, with the reason.
 *
 * `node scripts/mcp-conformance.mjs --scenario NAME` runs one server scenario and no client
 * one (any other option of `conformance server` passes through too);
 * `--client-scenario NAME` runs one client scenario and no server one. On Node 20 the suite runs with scripts/mcp-conformance-hooks.mjs (it imports Node 22's
 * fs.globSync). Offline; state in a fresh directory; the scenarios' checks.json are kept in
 * .wrangler/mcp-conformance/.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, request } from 'node:http';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, killLocalServer, startLocalServer } from './local-server.mjs';
import { e2eClient } from './e2e-client.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const here = join(root, 'test/mcp-conformance');
const token = randomBytes(16).toString('hex');
const stateDir = join(root, `.wrangler/mcp-conformance-state-${process.pid}`);
const resultsDir = join(root, '.wrangler/mcp-conformance');
const suite = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** The scopes of the key the suite calls with. */
const AGENT_SCOPES = ['runs:start:*', 'asks:answer:*', 'runs:read'];

/** The client scenarios of the suite that apply to a host (the auth/* ones are OAuth flows of a host's own). */
const CLIENT_SCENARIOS = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry'];

/** Says what the check is doing. */
const say = (text) => console.log(`mcp-conformance: ${text}`);

/**
 * A loopback reverse proxy to `target` that adds `authorization` to every request: the suite's
 * client as an MCP host configured with a bearer key would send it. Bodies stream both ways
 * (SSE answers included).
 */
async function startKeyProxy(target, authorization) {
  const port = await freePort();
  const own = `127.0.0.1:${port}`;
  const upstream = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const headers = { ...incoming.headers, authorization };
    if (headers.host === own) headers.host = upstream.host;
    if (headers.origin === `http://${own}`) headers.origin = upstream.origin;
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    forwarded.on('error', () => outgoing.destroy());
    outgoing.on('close', () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://${own}`, close: () => new Promise((resolve) => server.close(resolve).closeAllConnections()) };
}

/**
 * Runs `conformance server` against `url` (every scenario, the suite's pending ones too:
 * json-schema-2020-12 and server-sse-polling; or the `--scenario NAME` given to this
 * script); resolves with its exit code.
 */
function runSuite(url) {
  const args = ['--import', join(root, 'scripts/mcp-conformance-hooks.mjs'), suite, 'server', '--url', url, '--suite', 'all'];
  args.push('--expected-failures', join(here, 'expected-failures.yaml'), '--output-dir', resultsDir, ...process.argv.slice(2));
  const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NO_COLOR: '1' } });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}

/** Runs `conformance client` for `scenario` with the MCP Pack as the client; resolves with its exit code. */
function runClientScenario(scenario) {
  const command = `${process.execPath} ${join(root, 'scripts/mcp-conformance-client.mjs')}`;
  const args = ['--import', join(root, 'scripts/mcp-conformance-hooks.mjs'), suite, 'client', '--command', command, '--scenario', scenario];
  args.push('--expected-failures', join(here, 'expected-failures.yaml'), '--output-dir', resultsDir, '--timeout', '60000');
  const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NO_COLOR: '1' } });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}

/** The client scenarios to run: `--client-scenario NAME`'s one, none when a server scenario was picked, else all. */
function clientScenarios() {
  const picked = process.argv.indexOf('--client-scenario');
  if (picked >= 0) return [process.argv[picked + 1]];
  return process.argv.length > 2 ? [] : CLIENT_SCENARIOS;
}

/** Runs the client scenarios; resolves with 0 when each did as expected-failures.yaml's client: says. */
async function checkClients() {
  let failed = 0;
  for (const scenario of clientScenarios()) {
    say(`client scenario ${scenario}, with Runvil's MCP Pack as the client`);
    const code = await runClientScenario(scenario);
    if (code !== 0) {
      console.error(
        `mcp-conformance: FAILED: client scenario ${scenario} failed and expected-failures.yaml's client: does not list it, or it is listed and passed (exit ${code})`,
      );
      failed = code;
    }
  }
  return failed;
}

/** Runs the server scenarios against the local server; resolves with the suite's exit code. */
async function checkServer() {
  server = await startLocalServer({ port: await freePort(), token, stateDir });
  const { api } = e2eClient(server.base, token);
  const prompts = readdirSync(join(here, 'prompts')).filter((file) => file.endsWith('.md'));
  for (const file of prompts) {
    await api('PUT', `/prompts/${file.slice(0, -3)}`, { body: readFileSync(join(here, 'prompts', file), 'utf8'), expect: 201 });
  }
  say(`serving ${server.base} with ${prompts.length} prompts of test/mcp-conformance/prompts`);
  // The suite calls as an agent would: with a key that may run every prompt, answer their asks and read runs.
  const { key } = await api('POST', '/keys', { body: { name: 'conformance', scopes: AGENT_SCOPES }, expect: 201 });
  proxy = await startKeyProxy(server.base, `Bearer ${key}`);
  const code = await runSuite(`${proxy.url}/mcp`);
  if (code !== 0) {
    console.error(`mcp-conformance: FAILED: a scenario failed that expected-failures.yaml does not list, or one it lists passed (exit ${code})`);
    console.error('--- server output ---');
    console.error(server.output.slice(-6000));
  } else {
    say('ok: every server scenario passed but those expected-failures.yaml lists, and each of those failed');
  }
  return code;
}

let server = null;
let proxy = null;
try {
  rmSync(resultsDir, { recursive: true, force: true });
  const clients = await checkClients();
  // npm start bundles the file RUNVIL_CONFIG names (wrangler's build runs with this environment).
  process.env.RUNVIL_CONFIG = join(here, 'runvil.yaml');
  const servers = process.argv.includes('--client-scenario') ? 0 : await checkServer();
  process.exitCode = servers || clients;
} catch (error) {
  console.error(`mcp-conformance: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  if (server) console.error(`--- server output ---\n${server.output.slice(-6000)}`);
  process.exitCode = 1;
} finally {
  await proxy?.close();
  await killLocalServer(server).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  delete process.env.RUNVIL_CONFIG;
}
