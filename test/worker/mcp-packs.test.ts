/**
 * MCP Packs in workerd, against the reference server (started by mcp-server.setup.ts): a
 * run of a prompt that declares the Pack calls its tools over Streamable HTTP from the run
 * object; the run keeps the tool list it was prepared with; a server that is down at
 * prepare refuses the run with the requirements notice; progress becomes `tool_progress`
 * events; an elicitation is an operator ask of the run; GET /packs lists the Packs.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { call, getRun, json, settled, until } from './app/client.ts';

const mcp = inject('mcp');

function configure(text: string): void {
  const parsed = parseDeploymentConfig(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
}

const CONFIG = `packs:
  everything/demo:
    description: The MCP reference server
    mcp: { url: "${mcp.url}" }
  everything/trusted:
    mcp: { url: "${mcp.url}" }
    trusted: true
  everything/down:
    mcp: { url: "${mcp.downUrl}" }
`;

const prompt = (name: string, uses: string, lua: string) => `---
name: ${name}
description: Calls the reference server.
runvil: 0
uses: [${uses}]
---

# MCP

## Call

\`\`\`lua
${lua}
\`\`\`
`;

async function startRun(name: string, uses: string, lua: string): Promise<string> {
  await json(await call('PUT', `/prompts/${name}`, { body: prompt(name, uses, lua) }), 201);
  return (await json<{ run_id: string }>(await call('POST', `/prompts/${name}/runs`, { body: { args: {} } }), 202)).run_id;
}

beforeAll(() => configure(CONFIG));
afterAll(() => replaceDeploymentConfig(null));

describe('an MCP Pack in workerd', () => {
  it('calls echo and get-sum from Lua in the run object, wrapped as untrusted', async () => {
    const runId = await startRun(
      'mcp-echo',
      'everything/demo',
      `
      return tools.call('demo/echo', { message = 'from workerd' }) .. '|' .. tools.call('demo/get-sum', { a = 2, b = 3 })`,
    );
    const view = await settled(runId);
    expect(view.status).toBe('completed');
    const [echo, sum] = view.result!.split('|');
    expect(echo).toMatch(/<untrusted_input_([0-9a-f]+)>\nEcho: from workerd\n<\/untrusted_input_\1>$/);
    expect(sum).toMatch(/<untrusted_input_([0-9a-f]+)>\nThe sum of 2 and 3 is 5\.\n<\/untrusted_input_\1>$/);
  });

  it("gives a trusted Pack's structured tool its structuredContent", async () => {
    const runId = await startRun(
      'mcp-structured',
      'everything/trusted',
      `
      local out = tools.call('trusted/get-structured-content', { location = 'Chicago' })
      return type(out) .. '|' .. tostring(type(out.temperature))`,
    );
    expect(await settled(runId)).toMatchObject({ status: 'completed', result: 'table|number' });
  });

  it('refuses the run with the requirements notice when the server is down at prepare', async () => {
    const runId = await startRun('mcp-down', 'everything/down', `return 'never'`);
    const view = await settled(runId);
    expect(view.status).toBe('failed');
    expect(view.error!.kind).toBe('RequirementsUnmet');
    expect(view.error!.message).toMatch(/^the environment cannot satisfy this prompt:\n- down is unavailable: the MCP server did not answer \(.+\)$/);
  });

  it("reports progress notifications as tool_progress events on the run's stream", async () => {
    const runId = await startRun('mcp-progress', 'everything/demo', `return tools.call('demo/trigger-long-running-operation', { duration = 0.3, steps = 3 })`);
    expect((await settled(runId)).status).toBe('completed');
    const text = await (await call('GET', `/runs/${runId}/events`)).text();
    const progress = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { type: string })
      .filter((event) => event.type === 'tool_progress');
    expect(progress).toEqual(
      [1, 2, 3].map((step) =>
        expect.objectContaining({ type: 'tool_progress', task: '0', tool: 'demo/trigger-long-running-operation', call: '0-1', progress: step, total: 3 }),
      ),
    );
  });

  it('makes an elicitation an ask of the run: the run suspends, the answer goes back to the server', async () => {
    const runId = await startRun('mcp-elicit', 'everything/trusted', `return tools.call('trusted/trigger-elicitation-request', {})`);
    // The ask shows as pending a moment before the run reads as suspended (live-run.ts: the verdict waits a turn of the event loop).
    const waiting = await until(runId, (view) => view.status !== 'running');
    expect(waiting.status).toBe('suspended');
    expect(waiting.pending).toEqual([
      expect.objectContaining({
        kind: 'ask',
        ask_id: '0-1',
        question: 'Please provide inputs for the following fields:',
        refusals: ['decline', 'cancel'],
        form: expect.objectContaining({ type: 'object', required: ['name'] }),
      }),
    ]);
    const form = waiting.pending[0]!.form!;
    expect(form.properties.name).toEqual({ type: 'string', title: 'String', description: 'Your full, legal name' });
    expect(form.properties.untitledSingleSelectEnum).toMatchObject({ enum: ['Monica', 'Rachel', 'Joey', 'Chandler', 'Ross', 'Phoebe'] });
    // An answer outside the form is refused at the ask, which stays pending; one that fits goes back to the server.
    const refused = await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: { name: 'Grace Hopper', untitledSingleSelectEnum: 'Janice' } } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('untitledSingleSelectEnum');
    await json(
      await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: { name: 'Grace Hopper', check: true, titledSingleSelectEnum: 'hero-2' } } }),
      200,
    );
    const done = await settled(runId);
    expect(done.status).toBe('completed');
    expect(done.result).toContain('"name": "Grace Hopper"');
    expect(done.result).toContain('"titledSingleSelectEnum": "hero-2"');
    expect(done.result).not.toContain('Janice');
  });

  it('keeps the tool list it was prepared with: a run stays on it when the file changes', async () => {
    const runId = await startRun(
      'mcp-kept',
      'everything/demo',
      `
      local answer = tools.call('user-input/ask', { question = 'go on?' })
      return tools.call('demo/echo', { message = answer })`,
    );
    const waiting = await until(runId, (view) => view.status !== 'running');
    expect(waiting.status).toBe('suspended');
    // The deployment now names another server for the Pack; the run keeps what it was prepared with.
    configure(CONFIG.replace(`mcp: { url: "${mcp.url}" }\n  everything/trusted`, `mcp: { url: "${mcp.downUrl}" }\n  everything/trusted`));
    try {
      await json(await call('POST', `/runs/${runId}/asks/${waiting.pending[0]!.ask_id}`, { body: { answer: 'kept' } }), 200);
      const done = await settled(runId);
      // The list is the run's; the calls go where the run was prepared to send them.
      expect(done.status).toBe('completed');
      expect(done.result).toContain('Echo: kept');
    } finally {
      configure(CONFIG);
    }
  });
});

describe('GET /packs', () => {
  it('needs the API token', async () => {
    expect((await call('GET', '/packs', { token: null })).status).toBe(401);
    expect((await call('GET', '/packs', { token: 'wrong' })).status).toBe(401);
  });

  it("lists the Host's Packs and each configured Pack, whether it can serve and why not", async () => {
    const body = await json<{
      packs: { name: string; source: string; available: boolean; reason: string | null; tools: { id: string }[]; left_out?: unknown[] }[];
    }>(await call('GET', '/packs'), 200);
    const byName = new Map(body.packs.map((pack) => [pack.name, pack]));
    expect(byName.get('runvil/user-input')).toMatchObject({ source: 'runvil', available: true, tools: [expect.objectContaining({ id: 'user-input/ask' })] });
    expect(byName.get('runvil/web')).toMatchObject({ source: 'runvil' });
    const demo = byName.get('everything/demo')!;
    expect(demo).toMatchObject({ source: 'mcp', available: true, reason: null, left_out: [] });
    expect(demo.tools.map((tool) => tool.id)).toEqual(expect.arrayContaining(['demo/echo', 'demo/get-sum', 'demo/trigger-elicitation-request']));
    const down = byName.get('everything/down')!;
    expect(down).toMatchObject({ source: 'mcp', available: false, tools: [] });
    expect(down.reason).toMatch(/^the MCP server did not answer \(.+\)$/);
  });
});

it('a configuration module leaves the run views as they were', async () => {
  // A prompt without configured Packs runs as before, with no packs read.
  const runId = await startRun('mcp-none', '', `return 'plain'`);
  expect(await settled(runId)).toMatchObject({ status: 'completed', result: 'plain' });
  expect((await getRun(runId)).status).toBe('completed');
});
