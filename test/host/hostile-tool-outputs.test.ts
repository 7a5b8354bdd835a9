/**
 * Tool outputs past the cap (TOOL_OUTPUT_BYTES, 1 MiB), from servers a deployment calls, as an
 * attacker would send them: an MCP server built with the official SDK (test/support/
 * hostile-mcp-server.mjs, over an SSE stream and as one JSON body) and an HTTP tool service
 * on loopback (its immediate 200 {"output"} and its later callback, through `runvil run`'s
 * listener). Each run ends with the Limit naming the Pack, the tool and the cap, or under the
 * cap completes; no answer of the Lua runtime's own (PANIC, Aborted) shows; the platform runs
 * the next prompt; and the servers still answer.
 */
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackListener } from '../../src/cli/callback-listener.ts';
import type { ConfiguredPack, DeploymentConfig } from '../../src/config/deployment-config.ts';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import type { RunOutcome } from '../../src/engine/run.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../../src/host/remote/configured-packs.ts';
import { runOnHost } from '../../src/host/host.ts';
import { httpToolPack } from '../../src/host/remote/http/http-tool-pack.ts';
import { MemoryCallLedger } from '../../src/host/memory-call-ledger.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { TOOL_OUTPUT_BYTES } from '../../src/host/tool-output-cap.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import { lua, newPlatform, resultOf, run } from '../engine/helpers.ts';
import { startHostileMcpServer, type HostileMcpServer } from '../support/hostile-mcp.ts';

const platform = await newPlatform();
const MiB = 1024 * 1024;
const ATTACKS = [15, 16, 20, 100];

function prompt(block: string, uses: string) {
  const parsed = parsePrompt(
    `---\nname: hostile\ndescription: Calls a hostile server.\nrunvil: 0\nuses: [${uses}]\n---\n\n# Hostile\n\n## Call\n\n\`\`\`lua\n${block}\n\`\`\`\n`,
    'hostile.md',
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.prompt;
}

/** The Limit a run past the cap ends with. */
const limitOf = (tool: string, pack: string) => ({
  kind: 'Limit',
  message: `the tool ${tool} of the Pack ${pack} answered more than the cap of 1 MiB on one tool output`,
});

/** Nothing of the Lua runtime's own failure reaches the run's outcome. */
function expectNoRuntimeText(outcome: RunOutcome): void {
  expect(JSON.stringify(outcome.status === 'failed' ? outcome.error : outcome.result)).not.toMatch(/PANIC|Aborted|unprotected|not enough memory/);
}

/** The platform still runs an honest prompt. */
async function expectPlatformUnharmed(): Promise<void> {
  expect(resultOf(await run(platform, lua(`return #string.rep('x', 1000)`)))).toBe('1000');
}

/** Answers whether `url` answers 200 within the time the test gives it. */
async function answers(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  await response.body?.cancel();
  return response.ok;
}

describe('an MCP server that answers past the output cap', () => {
  let server: HostileMcpServer;
  beforeAll(async () => {
    server = await startHostileMcpServer();
  }, 30_000);
  afterAll(() => server?.stop());

  function config(url: string): DeploymentConfig {
    const parsed = parseDeploymentConfig(`packs:\n  acme/hostile:\n    mcp: { url: "${url}" }\n    trusted: true\n`);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    return parsed.config;
  }

  async function runMcp(block: string, url = server.url): Promise<RunOutcome> {
    clearMcpToolListCache();
    const target = prompt(block, 'acme/hostile');
    const packs = snapshotPacksToPacks(await snapshotPacks(config(url), target, {}), {});
    const base = fixtureHost({}, [], []);
    return runOnHost(platform, { ...base, packs: [...base.packs, ...packs] }, { prompt: target });
  }

  for (const [how, endpoint] of [
    ['over an SSE stream', () => server.url],
    ['as one JSON body', () => server.jsonUrl],
  ] as const) {
    for (const mib of ATTACKS) {
      it(`with ${mib} MiB of text ${how} ends the run as Limit naming the Pack, the tool and the cap`, async () => {
        const outcome = await runMcp(`return #tools.call('hostile/text', { mib = ${mib} })`, endpoint());
        expect(outcome.status === 'failed' && outcome.error).toEqual(limitOf('hostile/text', 'acme/hostile'));
        expectNoRuntimeText(outcome);
        await expectPlatformUnharmed();
        expect(await answers(server.healthUrl)).toBe(true);
      }, 60_000);
    }
  }

  for (const mib of ATTACKS) {
    it(`with ${mib} MiB of structured content ends the run as Limit naming the Pack, the tool and the cap`, async () => {
      const outcome = await runMcp(`return #tools.call('hostile/data', { mib = ${mib} }).items`);
      expect(outcome.status === 'failed' && outcome.error).toEqual(limitOf('hostile/data', 'acme/hostile'));
      expectNoRuntimeText(outcome);
      await expectPlatformUnharmed();
    }, 60_000);
  }

  it('under the cap completes, text and structured alike', async () => {
    const under = (TOOL_OUTPUT_BYTES - 4096) / MiB;
    const outcome = await runMcp(`return #tools.call('hostile/text', { mib = ${under} }) .. '|' .. #tools.call('hostile/data', { mib = 0.5 }).items`);
    expect(resultOf(outcome)).toBe(`${Math.floor(under * MiB)}|512`);
  }, 60_000);

  it('many medium outputs in one run complete, each under the cap', async () => {
    const outcome = await runMcp(`local n = 0 for i = 1, 12 do n = n + #tools.call('hostile/text', { mib = 0.75 }) end return n`);
    expect(resultOf(outcome)).toBe(String(12 * 0.75 * MiB));
  }, 60_000);
});

describe('an HTTP tool service that answers past the output cap', () => {
  const SECRET = 'whsec_aG9zdGlsZS10b29sLXNlcnZpY2Utc2VjcmV0LTAwMA==';
  let server: Server;
  let origin = '';
  /** What the service posts to the callback URL, after it answered 202. */
  const callbackResults: Promise<number>[] = [];

  beforeAll(async () => {
    const webhook = new Webhook(SECRET);
    server = createServer((request, response) => {
      if (request.url === '/health') return void response.writeHead(200).end('ok');
      let text = '';
      request.setEncoding('utf8');
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        const call = webhook.verify(text, request.headers as Record<string, string>) as {
          tool: string;
          arguments: { mib: number };
          callback_url: string;
          callback_token: string;
        };
        const output = 'x'.repeat(Math.floor(call.arguments.mib * MiB));
        if (call.tool === 'hostile/now') return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ output }));
        response.writeHead(202).end();
        callbackResults.push(
          fetch(call.callback_url, {
            method: 'POST',
            headers: { authorization: `Bearer ${call.callback_token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ output }),
          }).then(
            (answer) => answer.status,
            () => 0,
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const pack = (): ConfiguredPack => ({
    fqName: 'acme/hostile',
    description: 'A hostile tool service.',
    trusted: true,
    source: {
      kind: 'http',
      url: `${origin}/tools`,
      secret: SECRET,
      tools: ['now', 'later'].map((name) => ({
        name,
        description: `Answers ${name}.`,
        parameters: { type: 'object', properties: { mib: { type: 'number' } } },
        output: 'plain' as const,
        timeoutSeconds: 60,
      })),
    },
  });

  /** Runs as `runvil run` does: a memory call ledger, results posted to its loopback listener. */
  async function runHttp(block: string): Promise<RunOutcome> {
    const listener = new CallbackListener('run-1');
    const calls = new MemoryCallLedger({ callback: (callId) => listener.callback(callId) });
    listener.deliver = (callId, result) => calls.deliver(callId, result);
    try {
      const base = fixtureHost({}, [], []);
      return await runOnHost(
        platform,
        { ...base, calls, packs: [...base.packs, httpToolPack(pack() as never, { vars: {} })] },
        { prompt: prompt(block, 'acme/hostile') },
      );
    } finally {
      calls.closeAll();
      listener.close();
    }
  }

  for (const mib of ATTACKS) {
    it(`with ${mib} MiB answered at once ends the run as Limit naming the Pack, the tool and the cap`, async () => {
      const outcome = await runHttp(`return #tools.call('hostile/now', { mib = ${mib} })`);
      expect(outcome.status === 'failed' && outcome.error).toEqual(limitOf('hostile/now', 'acme/hostile'));
      expectNoRuntimeText(outcome);
      await expectPlatformUnharmed();
      expect(await answers(`${origin}/health`)).toBe(true);
    }, 60_000);

    it(`with ${mib} MiB posted to the callback later ends the run as Limit, and the service hears 413`, async () => {
      const outcome = await runHttp(`return #tools.call('hostile/later', { mib = ${mib} })`);
      expect(outcome.status === 'failed' && outcome.error).toEqual(limitOf('hostile/later', 'acme/hostile'));
      expectNoRuntimeText(outcome);
      expect(await callbackResults.at(-1)).toBe(413);
      await expectPlatformUnharmed();
    }, 60_000);
  }

  it('under the cap completes, at once and later', async () => {
    const outcome = await runHttp(`return #tools.call('hostile/now', { mib = 0.9 }) .. '|' .. #tools.call('hostile/later', { mib = 0.9 })`);
    expect(resultOf(outcome)).toBe(`${Math.floor(0.9 * MiB)}|${Math.floor(0.9 * MiB)}`);
  }, 60_000);
});
