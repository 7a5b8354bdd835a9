/**
 * `input_required` (MCP 2026-07-28): a server's questions come back as a result with an
 * opaque request state, not as a request on an open connection. Against the 2026-07-28 test
 * server (test/support/modern-mcp-server.mjs, built with the SDK's v2 server, a process on
 * loopback), a tool that asks twice (a name, then a colour from an enum) becomes two operator
 * asks of the run, typed from the requested schema; the retry carries the answers and the
 * server's request state; decline and cancel are answers; and the server may restart
 * between the rounds (it keeps nothing: the state travels with the retry).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import type { AskContext, OperatorAnswer } from '../../src/host/operator.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../../src/host/remote/configured-packs.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import { newPlatform } from '../engine/helpers.ts';
import { startModernMcpServer, type ModernMcpServer } from '../support/modern-mcp.ts';

let server: ModernMcpServer;
beforeAll(async () => {
  server = await startModernMcpServer();
});
afterAll(() => server?.stop());
beforeEach(() => clearMcpToolListCache());

const PROMPT = (() => {
  const parsed = parsePrompt(
    "---\nname: asks\ndescription: Calls asks-twice.\nrunvil: 0\nuses: [acme/modern]\n---\n\n# Asks\n\n## Call\n\n```lua\nreturn tools.call('modern/asks-twice', {})\n```\n",
    'asks.md',
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.prompt;
})();

/** Runs PROMPT; `answer` answers each ask (its context and how many came before). */
async function run(answer: (context: AskContext, index: number) => Promise<OperatorAnswer>): Promise<{ result: string; asked: AskContext[] }> {
  const parsed = parseDeploymentConfig(`packs:\n  acme/modern:\n    mcp: { url: "${server.url}" }\n`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const snapshots = await snapshotPacks(parsed.config, PROMPT, {});
  const asked: AskContext[] = [];
  const base = fixtureHost({}, [], []);
  const operator = { ask: (context: AskContext) => (asked.push(context), answer(context, asked.length - 1)) };
  const outcome = await runOnHost(
    await newPlatform(),
    { ...base, operator, packs: [...base.packs, ...snapshotPacksToPacks(snapshots, {})] },
    { prompt: PROMPT },
  );
  if (outcome.status !== 'completed') throw new Error(JSON.stringify(outcome));
  // The output is wrapped as untrusted: the server's own text is inside the envelope.
  return { result: /<untrusted_input_[0-9a-f]+>\n([^]*)\n<\/untrusted_input_/.exec(outcome.result)![1]!, asked };
}

const answers =
  (...texts: string[]) =>
  async (_: AskContext, index: number): Promise<OperatorAnswer> =>
    index < texts.length ? { ok: true, text: texts[index]! } : { ok: false, message: "the operator's window closed" };

describe('a tool that answers input_required twice', () => {
  it('asks the operator each round, typed from the schema, and returns the result of the last retry', async () => {
    const { result, asked } = await run(answers('Ada', 'green'));
    expect(result).toBe('Ada likes green');
    expect(asked.map(({ question, choices, part }) => ({ question, choices, part }))).toEqual([
      { question: 'Who is asking?\n\nname: Your name', choices: undefined, part: 0 },
      { question: 'Which colour, Ada?\n\ncolour\n(one of: red, green, blue)', choices: ['red', 'green', 'blue'], part: 1 },
    ]);
  });

  it('declines when the answer is outside the enum, sending nothing of it', async () => {
    expect((await run(answers('Ada', 'purple'))).result).toBe('declined');
  });

  it('cancels when no one can answer', async () => {
    expect((await run(answers('Ada'))).result).toBe('cancelled');
  });

  it('goes on when the server restarts between the rounds', async () => {
    const { result } = await run(async (_, index) => {
      if (index === 1) {
        const port = server.port;
        await server.stop();
        server = await startModernMcpServer(port);
      }
      return { ok: true, text: index === 0 ? 'Grace' : 'blue' };
    });
    expect(result).toBe('Grace likes blue');
  });
});
