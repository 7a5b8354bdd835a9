/**
 * A run becomes a test; a run forks (DESIGN.md), for runs of configured Packs and runs that
 * failed, in workerd: a run that called an MCP Pack, and one whose HTTP tool waited for its
 * callback (202, then the result), give test files that `runvil test`'s runner passes
 * offline, with the Pack in `host.packs` as the run was prepared with it; each forks at
 * every N and the fork completes, on the tool list the run kept. A run that failed with a
 * Lua error gives a test file that expects the error as the replay names it.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parse } from 'yaml';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { readTestText } from '../../src/cli/test-file.ts';
import { runPromptTest } from '../../src/cli/test-run.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { isolatePlatform } from '../../src/worker/workerd-lua/lua-platform.ts';
import { call, getRun, json, settled, until } from './app/client.ts';
import { receivedBy } from './app/tool-service.ts';

vi.setConfig({ testTimeout: 30_000 });

const mcp = inject('mcp');

function configure(text: string): void {
  const parsed = parseDeploymentConfig(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
}

const prompt = (name: string, uses: string, lua: string) => `---
name: ${name}
description: A run that becomes a test.
runvil: 0
uses: [${uses}]
---

# ${name}

## Go

\`\`\`lua
${lua}
\`\`\`
`;

async function startRun(name: string, uses: string, lua: string): Promise<string> {
  await json(await call('PUT', `/prompts/${name}`, { body: prompt(name, uses, lua) }), 201);
  return (await json<{ run_id: string }>(await call('POST', `/prompts/${name}/runs`, { body: { args: {} } }), 202)).run_id;
}

async function testFileOf(runId: string): Promise<string> {
  const response = await call('GET', `/runs/${runId}/test.yaml`);
  expect(response.status).toBe(200);
  return response.text();
}

/** Runs a test file's text through `runvil test`'s runner; its failure lines (none when it passed). */
async function runTestText(text: string): Promise<string[]> {
  const test = await readTestText(text, 'run.test.yaml', async () => 'no prompt files here');
  if (!test.ok) throw new Error(`the test file does not fit the format: ${JSON.stringify(test.problems)}`);
  return runPromptTest(await isolatePlatform(), test.value);
}

/** How many entries a test file's journal map lists. */
const journalLength = (text: string): number => text.split('\n').filter((line) => /^# {3}\d+\. /.test(line)).length;

/** Forks `runId` at every N of its journal; each fork's view once it has ended. */
async function forkAtEveryN(runId: string, length: number, finish: (forkId: string) => Promise<void> = async () => {}) {
  const ended = [];
  for (let at = 0; at <= length; at++) {
    const started = await json<{ run_id: string }>(await call('POST', `/runs/${runId}/fork`, { body: { at } }), 202);
    await finish(started.run_id);
    const view = await settled(started.run_id);
    ended.push({ at, status: view.status, result: view.result, error: view.error });
  }
  return ended;
}

const CONFIG = `packs:
  everything/demo:
    description: The MCP reference server
    mcp: { url: "${mcp.url}" }
  everything/down:
    mcp: { url: "${mcp.downUrl}" }
`;

beforeAll(() => configure(CONFIG));
afterAll(() => replaceDeploymentConfig(null));

describe('a run that called an MCP Pack', () => {
  let runId: string;
  let result: string;
  let text: string;

  beforeAll(async () => {
    runId = await startRun(
      'replay-mcp',
      'everything/demo',
      "return tools.call('demo/echo', { message = 'replayed' }) .. '|' .. tools.call('demo/get-sum', { a = 2, b = 3 })",
    );
    const view = await settled(runId);
    expect(view.status).toBe('completed');
    result = view.result!;
    text = await testFileOf(runId);
  });

  it('gives a test file with the Pack in host.packs, its tools as the run was prepared with them', () => {
    const file = parse(text);
    const tools = file.host.packs['everything/demo'].tools as { name: string; trusted: boolean }[];
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(tools.every((tool) => tool.trusted === false)).toBe(true);
    expect(file.recorded).toEqual([
      { tool: 'demo/echo', args: { message: 'replayed' }, section: 'Go', output: 'Echo: replayed' },
      { tool: 'demo/get-sum', args: { a: 2, b: 3 }, section: 'Go', output: 'The sum of 2 and 3 is 5.' },
    ]);
    expect(file.expect.result).toBe(result);
  });

  it('passes runvil test offline', async () => {
    expect(await runTestText(text)).toEqual([]);
  });

  it('forks at every N, and each fork completes as the run did', async () => {
    const ended = await forkAtEveryN(runId, journalLength(text));
    expect(ended).toEqual(ended.map(({ at }) => ({ at, status: 'completed', result, error: null })));
  });

  it('keeps the tool list the run was prepared with, in its test file and its forks, once the server no longer answers', async () => {
    configure(`packs:\n  everything/demo:\n    mcp: { url: "${mcp.downUrl}" }\n`);
    try {
      expect(await testFileOf(runId)).toBe(text);
      const started = await json<{ run_id: string }>(await call('POST', `/runs/${runId}/fork`, { body: { at: journalLength(text) } }), 202);
      const done = await settled(started.run_id);
      expect({ status: done.status, result: done.result }).toEqual({ status: 'completed', result });
    } finally {
      configure(CONFIG);
    }
  });
});

describe('a run whose HTTP tool waited for its callback', () => {
  let runId: string;
  let text: string;

  /** Posts the result of the run's waiting deploy/start call once the run waits on it. */
  async function deliver(id: string, output: string): Promise<void> {
    const view = await until(id, (got) => got.status !== 'running');
    if (view.status !== 'suspended') return;
    const call_ = receivedBy(id).at(-1)!;
    await json(await call('POST', `/runs/${id}/tool-results/${call_.body.call_id}`, { body: { output }, token: call_.body.callback_token }), 200);
  }

  beforeAll(async () => {
    runId = await startRun('replay-deploy', 'acme/deploy', "return 'deployed: ' .. tools.call('deploy/start', { service = 'api' })");
    await deliver(runId, 'live at v7');
    expect(await getRun(runId).then((view) => view.result)).toBe('deployed: live at v7');
    text = await testFileOf(runId);
  });

  it('gives a test file that passes runvil test offline', async () => {
    const file = parse(text);
    expect(file.host.packs['acme/deploy'].tools.map((tool: { name: string }) => tool.name)).toContain('start');
    expect(file.recorded).toEqual([{ tool: 'deploy/start', args: { service: 'api' }, section: 'Go', output: 'live at v7' }]);
    expect(await runTestText(text)).toEqual([]);
  });

  it('forks at every N, and each fork completes (a fork before the call waits for its own callback)', async () => {
    const ended = await forkAtEveryN(runId, journalLength(text), (forkId) => deliver(forkId, 'live at v7'));
    expect(ended).toEqual(ended.map(({ at }) => ({ at, status: 'completed', result: 'deployed: live at v7', error: null })));
  });
});

describe('a run that failed with a Lua error', () => {
  it('gives a test file that passes runvil test: the error names the chunk as the replay does', async () => {
    const runId = await startRun('replay-error', 'user-input', 'local n = nil\nreturn n.field');
    const view = await settled(runId);
    expect(view.status).toBe('failed');
    expect(view.error!.kind).toBe('Lua');
    const text = await testFileOf(runId);
    expect(parse(text).expect.error).toEqual(view.error);
    expect(await runTestText(text)).toEqual([]);
  });
});

describe('a run refused because its MCP server did not answer when it was prepared', () => {
  it('gives a test file where the Pack cannot serve, for the same reason, and which passes runvil test', async () => {
    const runId = await startRun('replay-down', 'everything/down', "return 'never'");
    const view = await settled(runId);
    expect(view.error).toMatchObject({ kind: 'RequirementsUnmet' });
    const text = await testFileOf(runId);
    expect(parse(text).host.packs['everything/down']).toEqual({ unavailable: expect.stringMatching(/^the MCP server did not answer/), tools: [] });
    expect(await runTestText(text)).toEqual([]);
  });

  it('forks at 0, and the fork is refused as the run was, for the same reason', async () => {
    const runId = await startRun('replay-down-fork', 'everything/down', "return 'never'");
    const view = await settled(runId);
    const ended = await forkAtEveryN(runId, 0);
    expect(ended).toEqual([{ at: 0, status: 'failed', result: null, error: view.error }]);
  });
});
