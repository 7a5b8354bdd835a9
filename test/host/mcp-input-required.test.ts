/**
 * `input_required` (MCP 2026-07-28): a server's questions come back as a result with an
 * opaque request state, not as a request on an open connection. Against the 2026-07-28 test
 * server (test/support/modern-mcp-server.mjs, built with the SDK's v2 server, a process on
 * loopback), a tool that asks twice (a name, then a colour from an enum) becomes two form asks
 * of the run, each the requested schema as it stands; the retry carries the answers and the
 * server's request state, and the call is never sent again from its start; `decline` and
 * `cancel` are answers; the server may restart between the rounds (it keeps nothing: the
 * state travels with the retry); and a hostile server's rounds are bounded.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import type { Json } from '../../src/json/json.ts';
import { runOnHost } from '../../src/host/host.ts';
import { ScriptedOperator, type AskContext, type Operator, type OperatorAnswer } from '../../src/host/operator.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../../src/host/remote/configured-packs.ts';
import { MAX_INPUT_REQUESTS, MAX_INPUT_ROUNDS, MAX_REQUEST_STATE_CHARS } from '../../src/host/remote/mcp/mcp-input-rounds.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import { newPlatform } from '../engine/helpers.ts';
import { startModernMcpServer, type ModernMcpServer } from '../support/modern-mcp.ts';

let server: ModernMcpServer;
beforeAll(async () => {
  server = await startModernMcpServer();
  await fetch(`${origin()}/s/hostile/variant/hostile`, { method: 'POST' });
});
afterAll(() => server?.stop());
beforeEach(async () => {
  clearMcpToolListCache();
  await fetch(`${origin()}/calls`, { method: 'DELETE' });
});

const origin = () => server.url.slice(0, -'/mcp'.length);

/** The tools/call requests the server's default slot got, in order. */
async function callsSeen(): Promise<{ tool: string; requestState: string | null; inputResponses: string[] }[]> {
  return (await fetch(`${origin()}/calls`)).json();
}

/** A prompt that calls `tool` with `args`, returning its output or `failed: <message>`. */
function promptCalling(tool: string, args: Json) {
  const lua = `local ok, out = pcall(tools.call, '${tool}', json.decode(${JSON.stringify(JSON.stringify(args))}))\nreturn ok and out or ('failed: ' .. tostring(out))`;
  const parsed = parsePrompt(
    `---\nname: asks\ndescription: Calls ${tool}.\nrunvil: 0\nuses: [acme/modern]\n---\n\n# Asks\n\n## Call\n\n\`\`\`lua\n${lua}\n\`\`\`\n`,
    'asks.md',
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.prompt;
}

/** Runs a call of `tool` against the server (its slot `slot`), each ask answered by `operator`; the output without its untrusted envelope. */
async function run(operator: Operator, tool = 'modern/asks-twice', args: Json = {}, slot = ''): Promise<string> {
  const prompt = promptCalling(tool, args);
  const url = slot === '' ? server.url : `${origin()}/s/${slot}/mcp`;
  const parsed = parseDeploymentConfig(`packs:\n  acme/modern:\n    mcp: { url: "${url}" }\n`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const snapshots = await snapshotPacks(parsed.config, prompt, {});
  const base = fixtureHost({}, [], []);
  const outcome = await runOnHost(await newPlatform(), { ...base, operator, packs: [...base.packs, ...snapshotPacksToPacks(snapshots, {})] }, { prompt });
  if (outcome.status !== 'completed') throw new Error(JSON.stringify(outcome));
  // The output is wrapped as untrusted: the server's own text is inside the envelope.
  return /<untrusted_input_[0-9a-f]+>\n([^]*)\n<\/untrusted_input_/.exec(outcome.result)?.[1] ?? outcome.result;
}

/** An operator that records each ask and answers it with `answer`. */
function operatorOf(answer: (context: AskContext, index: number) => Promise<OperatorAnswer>): Operator & { asked: AskContext[] } {
  const asked: AskContext[] = [];
  return { asked, ask: (context) => (asked.push(context), answer(context, asked.length - 1)) };
}

describe('a tool that answers input_required twice', () => {
  it("asks the operator each round with the requested schema as the ask's form, and the retry carries the state", async () => {
    const operator = operatorOf(async (_, index) => ({ ok: true, text: index === 0 ? '{"name":"Ada"}' : '{"colour":"green"}' }));
    expect(await run(operator)).toBe('Ada likes green');
    expect(operator.asked.map(({ question, form, choices, refusals, part }) => ({ question, form, choices, refusals, part }))).toEqual([
      {
        question: 'Who is asking?',
        form: { type: 'object', properties: { name: { type: 'string', description: 'Your name' } }, required: ['name'] },
        choices: undefined,
        refusals: ['decline', 'cancel'],
        part: 0,
      },
      {
        question: 'Which colour, Ada?',
        form: { type: 'object', properties: { colour: { type: 'string', enum: ['red', 'green', 'blue'] } }, required: ['colour'] },
        choices: undefined,
        refusals: ['decline', 'cancel'],
        part: 1,
      },
    ]);
    // Three sends: the call, then one retry a round, each with the state the server gave and the answer by its key.
    const seen = await callsSeen();
    expect(seen.map(({ inputResponses }) => inputResponses)).toEqual([[], ['name'], ['colour']]);
    expect(seen[0]!.requestState).toBeNull();
    expect(JSON.parse(Buffer.from(seen[2]!.requestState!, 'base64url').toString())).toEqual({ name: 'Ada' });
  });

  it('takes form answers on every path that fits one: a scripted operator with objects', async () => {
    expect(await run(new ScriptedOperator([{ name: 'Grace' }, { colour: 'blue' }]))).toBe('Grace likes blue');
  });

  it('refuses an answer outside the enum at the ask, sending none of it (no one answers: the call cancels)', async () => {
    const operator = new ScriptedOperator([{ name: 'Ada' }, { colour: 'purple' }]);
    expect(await run(operator)).toBe('cancelled');
    expect(operator.refused[0]!.message).toContain('colour');
    expect((await callsSeen()).map(({ inputResponses }) => inputResponses)).toEqual([[], ['name'], ['colour']]);
  });

  it('sends decline when the operator answers decline', async () => {
    expect(await run(new ScriptedOperator(['decline']))).toBe('declined');
  });

  it('sends cancel when the operator answers cancel, or when no one can answer', async () => {
    expect(await run(new ScriptedOperator([{ name: 'Ada' }, 'cancel']))).toBe('cancelled');
    expect(await run(new ScriptedOperator([{ name: 'Ada' }]))).toBe('cancelled');
  });

  it('goes on when the server restarts between the rounds', async () => {
    const operator = operatorOf(async (_, index) => {
      if (index === 1) {
        const port = server.port;
        await server.stop();
        server = await startModernMcpServer(port);
      }
      return { ok: true, text: index === 0 ? '{"name":"Grace"}' : '{"colour":"blue"}' };
    });
    expect(await run(operator)).toBe('Grace likes blue');
    await fetch(`${origin()}/s/hostile/variant/hostile`, { method: 'POST' });
  });
});

describe('a hostile server answering input_required', () => {
  const attack = async (name: string, answers: Json[] = []) => {
    const operator = new ScriptedOperator(answers);
    const result = await run(operator, 'modern/asks-hostile', { attack: name }, 'hostile');
    return { result, asked: operator };
  };
  const texts = (count: number): Json[] => Array.from({ length: count }, (_, i) => ({ text: `answer ${i}` }));

  it(`fails a call whose rounds never end at the ${MAX_INPUT_ROUNDS}th round, after asking each`, async () => {
    const { result } = await attack('endless', texts(MAX_INPUT_ROUNDS + 5));
    expect(result).toContain(`modern/asks-hostile: the MCP server's input_required came ${MAX_INPUT_ROUNDS + 1} times in one call`);
  });

  it('fails a call whose rounds ask nothing forever, without asking anyone', async () => {
    const { result, asked } = await attack('endless-silent');
    expect(result).toContain(`a call takes at most ${MAX_INPUT_ROUNDS} rounds`);
    expect(asked.refused).toEqual([]);
  });

  it('refuses a request state past the cap, before asking', async () => {
    expect((await attack('huge-state', texts(1))).result).toContain(`a round keeps at most ${MAX_REQUEST_STATE_CHARS}`);
  });

  it('refuses a requested schema that is no flat form (nested objects, a backtracking pattern)', async () => {
    expect((await attack('deep-schema')).result).toContain('its requestedSchema is no form an operator can fill: form.properties.a.type must be');
    expect((await attack('pattern')).result).toContain('form.properties.text.pattern is not part of');
  });

  it('refuses too many input requests in a round, before asking', async () => {
    expect((await attack('many-requests')).result).toContain(`a round makes at most ${MAX_INPUT_REQUESTS}`);
  });
});
