/**
 * Tool outputs past the cap (1 MiB) in workerd, as an attacker sends them: the hostile MCP
 * server (test/support/hostile-mcp-server.mjs, started by mcp-server.setup.ts; built with the
 * official SDK) over an SSE stream and as one JSON body, text and structured; its HTTP tool
 * service answering 200 {"output"} at once; and a result of 100 MiB streamed to a call's
 * callback URL. Each run fails with the Limit naming the Pack, the tool and the cap (under
 * the cap it completes); no response carries the Lua runtime's own text; the Worker answers
 * /health afterwards; another run in the same isolate completes.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { call, json, testEnv, until, type RunView } from './app/client.ts';
import app from './app/test-worker.ts';
import { receivedBy } from './app/tool-service.ts';

vi.setConfig({ testTimeout: 60_000 });

const hostile = inject('hostile');
const MiB = 1024 * 1024;
const ATTACKS = [15, 16, 20, 100];

const CONFIG = `packs:
  acme/hostile:
    mcp: { url: "${hostile.url}" }
    trusted: true
  acme/hostile-json:
    mcp: { url: "${hostile.jsonUrl}" }
  acme/flood:
    http: { url: "${hostile.toolsUrl}", secret: "\${DEPLOY_SECRET}" }
    trusted: true
    tools:
      - name: now
        parameters: { type: object, properties: { mib: { type: number } } }
`;

beforeAll(() => {
  const parsed = parseDeploymentConfig(CONFIG);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
});
afterAll(() => replaceDeploymentConfig(null));

const prompt = (name: string, uses: string, lua: string) =>
  `---\nname: ${name}\ndescription: Calls a hostile server.\nrunvil: 0\nuses: [${uses}]\n---\n\n# Hostile\n\n## Call\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;

let prompts = 0;
/** Starts a run of a new prompt holding `lua`. */
async function startRun(uses: string, lua: string): Promise<string> {
  const name = `hostile-${++prompts}`;
  await json(await call('PUT', `/prompts/${name}`, { body: prompt(name, uses, lua) }), 201);
  return (await json<{ run_id: string }>(await call('POST', `/prompts/${name}/runs`, { body: { args: {} } }), 202)).run_id;
}

const ended = (runId: string) => until(runId, (view) => view.status === 'completed' || view.status === 'failed');

/** The run's error past the cap. */
const limitOf = (tool: string, pack: string) => ({
  kind: 'Limit',
  message: `the tool ${tool} of the Pack ${pack} answered more than the cap of 1 MiB on one tool output`,
});

/** What the Worker says of the run, to a client: nothing of the Lua runtime's own failure. */
async function expectNoRuntimeText(runId: string): Promise<void> {
  for (const path of [`/runs/${runId}`, `/runs/${runId}/events`]) {
    const text = await (await call('GET', path)).text();
    expect(text).not.toMatch(/PANIC|Aborted|unprotected error|not enough memory|RuntimeError/);
  }
}

/** The Worker answers /health within the time this test gives it, and another run in the isolate completes. */
async function expectWorkerUnharmed(): Promise<void> {
  const health = await Promise.race([call('GET', '/health', { token: null }), new Promise<null>((resolve) => setTimeout(() => resolve(null), 5_000))]);
  expect(health?.status).toBe(200);
  const runId = await startRun('', `return #string.rep('x', 1000) .. '|' .. json.encode({ 1, 2 })`);
  expect(await ended(runId)).toMatchObject({ status: 'completed', result: '1000|[1,2]' });
}

describe('an MCP server that answers past the output cap, in workerd', () => {
  for (const [how, pack, id] of [
    ['over an SSE stream', 'acme/hostile', 'hostile'],
    ['as one JSON body', 'acme/hostile-json', 'hostile-json'],
  ] as const) {
    for (const mib of ATTACKS) {
      it(`with ${mib} MiB of text ${how} fails the run with the Limit naming the Pack, the tool and the cap`, async () => {
        const runId = await startRun(pack, `return #tools.call('${id}/text', { mib = ${mib} })`);
        const view = await ended(runId);
        expect(view.status).toBe('failed');
        expect(view.error).toEqual(limitOf(`${id}/text`, pack));
        await expectNoRuntimeText(runId);
        await expectWorkerUnharmed();
      });
    }
  }

  for (const mib of [16, 100]) {
    it(`with ${mib} MiB of structured content fails the run with the Limit`, async () => {
      const runId = await startRun('acme/hostile', `return #tools.call('hostile/data', { mib = ${mib} }).items`);
      expect((await ended(runId)).error).toEqual(limitOf('hostile/data', 'acme/hostile'));
      await expectNoRuntimeText(runId);
      await expectWorkerUnharmed();
    });
  }

  it('under the cap completes, and many medium outputs in one run complete', async () => {
    const runId = await startRun(
      'acme/hostile',
      `local n = 0 for i = 1, 8 do n = n + #tools.call('hostile/text', { mib = 0.75 }) end return n .. '|' .. #tools.call('hostile/data', { mib = 0.5 }).items`,
    );
    expect(await ended(runId)).toMatchObject({ status: 'completed', result: `${8 * 0.75 * MiB}|512` });
  });
});

describe('an HTTP tool service that answers past the output cap, in workerd', () => {
  for (const mib of ATTACKS) {
    it(`with ${mib} MiB answered at once fails the run with the Limit naming the Pack, the tool and the cap`, async () => {
      const runId = await startRun('acme/flood', `return #tools.call('flood/now', { mib = ${mib} })`);
      const view = await ended(runId);
      expect(view.status).toBe('failed');
      expect(view.error).toEqual(limitOf('flood/now', 'acme/flood'));
      await expectNoRuntimeText(runId);
      await expectWorkerUnharmed();
    });
  }

  it('under the cap completes', async () => {
    const runId = await startRun('acme/flood', `return #tools.call('flood/now', { mib = 0.9 })`);
    expect(await ended(runId)).toMatchObject({ status: 'completed', result: String(Math.floor(0.9 * MiB)) });
  });

  it('with 100 MiB streamed to the callback URL answers 413 and fails the run with the Limit', async () => {
    const runId = await startRun('acme/deploy', `return tools.call('deploy/start', { service = 'api' })`);
    const view = await until(runId, (current: RunView) => current.status === 'suspended');
    expect(view.status).toBe('suspended');
    const sent = receivedBy(runId).at(-1)!.body;
    // Made as it is read: the route reads 1 MiB of it, and the rest is never made.
    let made = 0;
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"output":"'));
      },
      pull(controller) {
        if (made >= 100 * MiB) return controller.close();
        made += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const request = new Request(`https://runvil.test${new URL(sent.callback_url).pathname}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sent.callback_token}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await app.fetch(request, testEnv);
    expect(response.status).toBe(413);
    expect(made).toBeLessThan(8 * MiB);
    expect((await ended(runId)).error).toEqual(limitOf('deploy/start', 'acme/deploy'));
    await expectNoRuntimeText(runId);
    await expectWorkerUnharmed();
  });
});
