/**
 * An MCP server as a Pack, against the MCP reference server (@modelcontextprotocol/server-everything)
 * in the test's process, over the SDK's in-memory transport: what is under test is what a run
 * does with the protocol. An address nothing listens on goes over real HTTP; the HTTP boundary
 * itself is attacked in hostile-tool-outputs.test.ts and mcp-tool-list-bounds.test.ts.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { DeploymentConfig } from '../../src/config/deployment-config.ts';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { snapshotPacks, snapshotPacksToPacks, reportConfiguredPacks } from '../../src/host/remote/configured-packs.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import { clearMcpToolListCache, readMcpToolList, toolList } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { ScriptedOperator, type AskContext, type Operator } from '../../src/host/operator.ts';
import type { RunOutcome } from '../../src/engine/run.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import type { ScriptedReply } from '../../src/models/scripted.ts';
import { newPlatform as nodePlatform } from '../engine/helpers.ts';
import { everythingServer, MemoryMcpServers } from '../support/memory-mcp.ts';
import { freePort } from '../support/server-process.ts';

const servers = new MemoryMcpServers();
const server = { url: servers.add('http://everything.test/mcp', everythingServer) };
/** Another reference server, of one test's own (which stops it). */
let owned = 0;
function ownServer(): { url: string; stop(): Promise<void> } {
  const url = servers.add(`http://everything-${++owned}.test/mcp`, everythingServer);
  return { url, stop: () => servers.stop(url) };
}

afterAll(() => servers.close());
beforeEach(() => clearMcpToolListCache());

function config(text: string): DeploymentConfig {
  const parsed = parseDeploymentConfig(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}

const demoConfig = (url: string, extra = '') => config(`packs:\n  everything/demo:\n    mcp: { url: "${url}" }\n${extra}`);

function prompt(lua: string, uses = '[everything/demo]'): ReturnType<typeof parsePrompt> & { ok: true } {
  const text = `---\nname: mcp\ndescription: Uses the reference server.\nrunvil: 0\nuses: ${uses}\n---\n\n# MCP\n\n## Call\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;
  const parsed = parsePrompt(text, 'mcp.md');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed;
}

interface Ran {
  outcome: RunOutcome;
  progress: unknown[];
  asked: AskContext[];
}

async function run(
  lua: string,
  options: { config?: DeploymentConfig; vars?: Record<string, string>; model?: ScriptedReply[]; answers?: string[]; uses?: string } = {},
): Promise<Ran> {
  const parsed = prompt(lua, options.uses);
  const cfg = options.config ?? demoConfig(server.url);
  const vars = options.vars ?? {};
  const snapshots = await snapshotPacks(cfg, parsed.prompt, vars, [], servers.transport);
  const progress: unknown[] = [];
  const asked: AskContext[] = [];
  const scripted = new ScriptedOperator(options.answers ?? []);
  const operator: Operator = { ask: (context) => (asked.push(context), scripted.ask()) };
  const base = fixtureHost({}, [], options.model ?? []);
  const packs = snapshotPacksToPacks(
    snapshots,
    vars,
    (tool, context, step) => progress.push({ tool, task: context.effect?.chain, ...step }),
    servers.transport,
  );
  const outcome = await runOnHost(await nodePlatform(), { ...base, operator, packs: [...base.packs, ...packs] }, { prompt: parsed.prompt });
  return { outcome, progress, asked };
}

function result(ran: Ran): string {
  if (ran.outcome.status !== 'completed') throw new Error(`${ran.outcome.error.kind}: ${ran.outcome.error.message}`);
  return ran.outcome.result;
}

describe('an MCP server as a Pack', () => {
  it('calls echo and get-sum from Lua, their output wrapped as untrusted', async () => {
    const ran = await run(`
      local echo = tools.call('demo/echo', { message = 'hello from Lua' })
      local sum = tools.call('demo/get-sum', { a = 2, b = 3 })
      return echo .. '|' .. sum`);
    const text = result(ran);
    const [echo, sum] = text.split('|');
    expect(echo).toMatch(/<untrusted_input_([0-9a-f]+)>\nEcho: hello from Lua\n<\/untrusted_input_\1>$/);
    expect(sum).toMatch(/<untrusted_input_([0-9a-f]+)>\nThe sum of 2 and 3 is 5\.\n<\/untrusted_input_\1>$/);
  });

  it("offers the tools to the model under their wire names and runs the model's calls", async () => {
    const ran = await run(
      `tools.offer({ 'demo/echo', 'demo/get-sum' })
       messages:user('use the tools')
       return models.loop()`,
      {
        model: [
          {
            tool_calls: [
              { id: 'c1', name: 'demo_echo', arguments: { message: 'hi model' } },
              { id: 'c2', name: 'demo_get-sum', arguments: { a: 40, b: 2 } },
            ],
          },
          { content: 'done' },
        ],
      },
    );
    expect(result(ran)).toBe('done');
    const results = ran.outcome.events.filter((event) => event.type === 'tool_result');
    expect(results.map((event) => JSON.stringify(event))).toEqual([
      expect.stringMatching(/untrusted_input_[0-9a-f]+>\\nEcho: hi model\\n/),
      expect.stringMatching(/The sum of 40 and 2 is 42\./),
    ]);
  });

  it('gives structured output (structuredContent) only on a trusted Pack; untrusted gets the text wrapped', async () => {
    const lua = `return tools.call('demo/get-structured-content', { location = 'Chicago' })`;
    const trusted = await run(
      `local out = tools.call('demo/get-structured-content', { location = 'Chicago' })
      return type(out) .. '|' .. tostring(out.temperature ~= nil) .. '|' .. tostring(out.conditions)`,
      { config: demoConfig(server.url, '    trusted: true\n') },
    );
    expect(result(trusted)).toMatch(/^table\|true\|\w+/);
    const untrusted = result(await run(lua));
    expect(untrusted).toMatch(/<untrusted_input_[0-9a-f]+>\n\{"temperature":/);
  });

  it('writes image and resource parts as placeholders beside the text', async () => {
    const trusted = { config: demoConfig(server.url, '    trusted: true\n') };
    const image = result(await run(`return tools.call('demo/get-tiny-image', {})`, trusted));
    expect(image.split('\n')).toContain('[image image/png]');
    expect(image).not.toContain('iVBOR');
    const links = result(await run(`return tools.call('demo/get-resource-links', { count = 2 })`, trusted));
    expect(links).toBe(
      'Here are 2 resource links to resources available in this server:\n[resource demo://resource/dynamic/blob/1]\n[resource demo://resource/dynamic/text/2]',
    );
    const embedded = result(await run(`return tools.call('demo/get-resource-reference', {})`, trusted));
    expect(embedded.split('\n')[1]).toBe('[resource demo://resource/dynamic/text/1]');
  });

  it('makes a result with isError a tool failure whose message is its text', async () => {
    // The server fetches the URL it is given, and fails: nothing listens on port 1.
    const text = result(
      await run(`
      local ok, err = pcall(tools.call, 'demo/gzip-file-as-resource', { name = 'x.gz', data = 'http://127.0.0.1:1/x' })
      return tostring(ok) .. '|' .. err.kind .. '|' .. tostring(err)`),
    );
    expect(text).toBe('false|tool|tool call failure: fetch failed');
  });

  it("checks arguments against the tool's schema before the server sees them", async () => {
    const text = result(await run(`local ok, err = pcall(tools.call, 'demo/echo', { text = 1 }) return err.kind .. '|' .. tostring(err)`));
    expect(text).toBe('tool|tool call failure: demo_echo: missing message argument');
  });

  it('turns progress notifications into progress reports of the call', async () => {
    const ran = await run(`return tools.call('demo/trigger-long-running-operation', { duration = 0.3, steps = 3 })`);
    expect(result(ran)).toContain('Long running operation completed');
    expect(ran.progress).toEqual([
      { tool: 'demo/trigger-long-running-operation', task: '0', progress: 1, total: 3 },
      { tool: 'demo/trigger-long-running-operation', task: '0', progress: 2, total: 3 },
      { tool: 'demo/trigger-long-running-operation', task: '0', progress: 3, total: 3 },
    ]);
  });

  it("makes an elicitation one operator ask whose form is the server's schema, and sends the answer back to the server", async () => {
    const answer = { name: 'Ada Lovelace', check: true, integer: 7, untitledMultipleSelectEnum: ['Piano', 'Bass'], titledSingleSelectEnum: 'hero-3' };
    const ran = await run(`return tools.call('demo/trigger-elicitation-request', {})`, {
      config: demoConfig(server.url, '    trusted: true\n'),
      answers: [JSON.stringify(answer)],
    });
    expect(ran.asked).toHaveLength(1);
    expect(ran.asked[0]!.question).toBe('Please provide inputs for the following fields:');
    expect(ran.asked[0]!.effect).toEqual({ chain: '0', seq: 1 });
    expect(ran.asked[0]!.part).toBe(0);
    expect(ran.asked[0]!.refusals).toEqual(['decline', 'cancel']);
    const form = ran.asked[0]!.form!;
    expect(form.required).toEqual(['name']);
    expect(form.properties.name).toEqual({ type: 'string', title: 'String', description: 'Your full, legal name' });
    expect(form.properties.untitledSingleSelectEnum).toMatchObject({ enum: ['Monica', 'Rachel', 'Joey', 'Chandler', 'Ross', 'Phoebe'], default: 'Monica' });
    expect(form.properties.legacyTitledEnum).toMatchObject({
      enum: ['pet-1', 'pet-2', 'pet-3', 'pet-4', 'pet-5'],
      enumNames: ['Cats', 'Dogs', 'Birds', 'Fish', 'Reptiles'],
    });
    expect(form.properties.titledMultipleSelectEnum).toMatchObject({ type: 'array', minItems: 1, maxItems: 3, default: ['fish-1'] });
    expect(form.properties.integer).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 42 });
    const text = result(ran);
    expect(text).toContain('User provided the requested information');
    expect(text).toContain('"name": "Ada Lovelace"');
    expect(text).toContain('"titledSingleSelectEnum": "hero-3"');
  });

  it('declines an answer outside the form, sending none of it', async () => {
    for (const outside of [
      { name: 'Ada', titledSingleSelectEnum: 'Wonder Woman' },
      { name: 'Ada', integer: 101 },
      { check: true },
      { name: 'Ada', role: 'admin' },
    ]) {
      const text = result(
        await run(`return tools.call('demo/trigger-elicitation-request', {})`, {
          config: demoConfig(server.url, '    trusted: true\n'),
          answers: [JSON.stringify(outside)],
        }),
      );
      expect(text).toContain('decline');
      expect(text).not.toContain('User provided the requested information');
    }
  });

  it('cancels the elicitation when the operator cannot answer', async () => {
    const text = result(await run(`return tools.call('demo/trigger-elicitation-request', {})`, { config: demoConfig(server.url, '    trusted: true\n') }));
    expect(text).toContain('cancel');
  });

  it('refuses the run with the requirements notice when the server is down at prepare', async () => {
    const port = await freePort();
    const ran = await run(`return 'never'`, { config: demoConfig(`http://127.0.0.1:${port}/mcp`) });
    expect(ran.outcome.status).toBe('failed');
    if (ran.outcome.status !== 'failed') return;
    expect(ran.outcome.error.kind).toBe('RequirementsUnmet');
    expect(ran.outcome.error.message).toMatch(/^the environment cannot satisfy this prompt:\n- demo is unavailable: the MCP server did not answer \(.+\)$/);
  });

  it("refuses the run naming a missing ${NAME} of the Pack's configuration", async () => {
    const cfg = config(`packs:\n  everything/demo:\n    mcp:\n      url: "${server.url}"\n      headers: { Authorization: "Bearer \${DEMO_MCP_TOKEN}" }\n`);
    const ran = await run(`return 'never'`, { config: cfg });
    expect(ran.outcome.status === 'failed' && ran.outcome.error.message).toBe(
      'the environment cannot satisfy this prompt:\n- demo is unavailable: runvil.yaml needs the environment variable DEMO_MCP_TOKEN, which is not set',
    );
    const ok = await run(`return tools.call('demo/echo', { message = 'x' })`, { config: cfg, vars: { DEMO_MCP_TOKEN: 't' } });
    expect(result(ok)).toContain('Echo: x');
  });

  it('reads no server for a prompt that does not declare the Pack, and offers none of its tools', async () => {
    const port = await freePort();
    const ran = await run(`local ok, err = pcall(tools.call, 'demo/echo', { message = 'x' }) return tostring(err.kind)`, {
      config: demoConfig(`http://127.0.0.1:${port}/mcp`),
      uses: '[]',
    });
    expect(result(ran)).toBe('unbound_tool');
  });

  it('fails a call with the message when the server goes away during the run', async () => {
    const own = ownServer();
    const parsed = prompt(`
      local first = tools.call('demo/echo', { message = 'before' })
      local ok, err = pcall(tools.call, 'demo/echo', { message = 'after' })
      return tostring(ok) .. '|' .. tostring(err)`);
    const cfg = demoConfig(own.url);
    const snapshots = await snapshotPacks(cfg, parsed.prompt, {}, [], servers.transport);
    const base = fixtureHost({}, [], []);
    const packs = snapshotPacksToPacks(snapshots, {}, undefined, servers.transport);
    // The first call goes through; then the server stops before the second.
    const echo = packs[0]!;
    const original = echo.call.bind(echo);
    let calls = 0;
    echo.call = async (tool, args, context) => {
      if (calls++ === 1) await own.stop();
      return original(tool, args, context);
    };
    const outcome = await runOnHost(await nodePlatform(), { ...base, packs: [...base.packs, echo] }, { prompt: parsed.prompt });
    expect(outcome.status).toBe('completed');
    expect(outcome.status === 'completed' && outcome.result).toMatch(/^false\|tool call failure: demo\/echo: the MCP server did not answer \(.+\)$/);
  });

  it('keeps the tool list it read: a run built from the snapshot needs no tools/list again', async () => {
    const own = ownServer();
    const parsed = prompt(`return tools.call('demo/echo', { message = 'kept' })`);
    const snapshots = await snapshotPacks(demoConfig(own.url), parsed.prompt, {}, [], servers.transport);
    await own.stop();
    // The server is gone: the Packs from the snapshot still offer the tools it listed then.
    const packs = snapshotPacksToPacks(JSON.parse(JSON.stringify(snapshots)), {}, undefined, servers.transport);
    expect(packs[0]!.manifest.tools.map((tool) => tool.id)).toContain('demo/echo');
    expect(packs[0]!.unavailableReason!({ get: () => undefined })).toBeNull();
  });
});

describe('MCP tool lists', () => {
  it('leaves out names the name grammar refuses, and says why', () => {
    const list = toolList([
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'Bad Name', inputSchema: { type: 'object' } },
      { name: 'a/b', inputSchema: { type: 'object' } },
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'no-schema' },
    ]);
    expect(list).toEqual({
      ok: true,
      tools: [{ name: 'echo', description: '', parameters: { type: 'object' }, outputSchema: false }],
      refused: [
        { name: 'Bad Name', reason: "not a tool name: segments may contain only lowercase ASCII letters, digits, '-', '_', '.'" },
        { name: 'a/b', reason: "not a tool name: a Pack id is one segment, such as `web`, with no '/'" },
        { name: 'echo', reason: 'listed twice by the server' },
        { name: 'no-schema', reason: 'its inputSchema is not a JSON object' },
      ],
    });
  });

  it('caches a list for a short while in the isolate', async () => {
    const own = ownServer();
    const endpoint = { url: own.url, headers: {} };
    const first = await readMcpToolList(endpoint, Date.now, undefined, servers.transport);
    await own.stop();
    expect(await readMcpToolList(endpoint, Date.now, undefined, servers.transport)).toBe(first);
    clearMcpToolListCache();
    const down = await readMcpToolList(endpoint, Date.now, undefined, servers.transport);
    expect(down.ok).toBe(false);
  });

  it('reports each configured Pack, whether it can serve and why not, and what it leaves out', async () => {
    const port = await freePort();
    const cfg = config(`packs:
  everything/demo:
    mcp: { url: "${server.url}" }
  everything/down:
    mcp: { url: "http://127.0.0.1:${port}/mcp" }
  acme/deploy:
    http: { url: https://deploy.example.com, secret: "\${ACME_SECRET}" }
    trusted: true
    tools: [{ name: start, description: Start a deploy }]
`);
    const reports = await reportConfiguredPacks(cfg, {}, servers.transport);
    expect(reports[0]).toMatchObject({ name: 'everything/demo', id: 'demo', source: 'mcp', available: true, reason: null, trusted: false });
    expect(reports[0]!.tools.map((tool) => tool.id)).toEqual(expect.arrayContaining(['demo/echo', 'demo/get-sum']));
    expect(reports[0]!.tools.every((tool) => tool.trusted === false && tool.output === 'plain')).toBe(true);
    expect(reports[1]).toMatchObject({ name: 'everything/down', available: false, tools: [] });
    expect(reports[1]!.reason).toMatch(/^the MCP server did not answer \(.+\)$/);
    expect(reports[2]).toEqual({
      name: 'acme/deploy',
      id: 'deploy',
      description: '',
      source: 'http',
      trusted: true,
      url: 'https://deploy.example.com',
      available: false,
      reason: 'runvil.yaml needs the environment variable ACME_SECRET, which is not set',
      tools: [{ id: 'deploy/start', description: 'Start a deploy', output: 'plain', trusted: true }],
    });
  });
});
