/**
 * An MCP server's elicitation as asks, against a server in the test's process (over the SDK's
 * in-memory transport: what is under test is the protocol, not HTTP) that sends whatever
 * elicitation a test gives it and answers what came back: a field with choices gets back one of its own
 * choices or nothing (declined), whatever the operator's answer says; an elicitation past an
 * ask's caps is never asked, and the call fails saying why.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../../src/host/remote/configured-packs.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { MAX_CHOICE_CHARS, MAX_CHOICES, MAX_QUESTION_CHARS } from '../../src/host/ask-limits.ts';
import type { AskContext, Operator } from '../../src/host/operator.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import { newPlatform as nodePlatform } from '../engine/helpers.ts';
import { elicitingServer } from '../support/eliciting-mcp.ts';
import { MemoryMcpServers } from '../support/memory-mcp.ts';

const servers = new MemoryMcpServers();
const url = servers.add('http://eliciting.test/mcp', elicitingServer);

afterAll(() => servers.close());
beforeEach(() => clearMcpToolListCache());

/** What one elicitation came to: the reply the server got (or the call's failure), and the asks made. */
async function elicitation(
  args: { message?: string; repeat?: number; schema: object },
  answers: string[],
): Promise<{ reply: any; failure: string | null; asked: AskContext[] }> {
  const parsedConfig = parseDeploymentConfig(`packs:\n  acme/form:\n    mcp: { url: "${url}" }\n    trusted: true\n`);
  if (!parsedConfig.ok) throw new Error(JSON.stringify(parsedConfig.problems));
  const lua = `local ok, out = pcall(tools.call, 'form/elicit', json.decode(${JSON.stringify(JSON.stringify({ ...args, schema: JSON.stringify(args.schema) }))}))
return (ok and 'ok:' or 'failed:') .. tostring(out)`;
  const text = `---\nname: form\ndescription: Elicits.\nrunvil: 0\nuses: [acme/form]\n---\n\n# Form\n\n## Go\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;
  const parsed = parsePrompt(text, 'form.md');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const snapshots = await snapshotPacks(parsedConfig.config, parsed.prompt, {}, [], servers.transport);
  const asked: AskContext[] = [];
  const queue = [...answers];
  // An operator that answers whatever it is given: the checks under test are the Pack's own.
  const operator: Operator = {
    async ask(context) {
      asked.push(context);
      const next = queue.shift();
      return next === undefined ? { ok: false, message: "the operator's window closed" } : { ok: true, text: next };
    },
  };
  const base = fixtureHost({}, [], []);
  const outcome = await runOnHost(
    await nodePlatform(),
    { ...base, operator, packs: [...base.packs, ...snapshotPacksToPacks(snapshots, {}, undefined, servers.transport)] },
    { prompt: parsed.prompt },
  );
  if (outcome.status !== 'completed') throw new Error(JSON.stringify(outcome));
  const result = outcome.result ?? '';
  if (result.startsWith('failed:')) return { reply: null, failure: result.slice('failed:'.length), asked };
  const body = result.slice('ok:'.length);
  // A trusted Pack's plain output is the server's text as it is.
  return { reply: JSON.parse(body.slice(body.indexOf('{'))), failure: null, asked };
}

const one = (field: object) => ({ type: 'object', properties: { choice: field }, required: ['choice'] });
const ENUM = one({ type: 'string', enum: ['ada', 'bob'] });
const TITLED = one({
  type: 'string',
  oneOf: [
    { const: 'a1', title: 'Ada' },
    { const: 'b2', title: 'Bob' },
  ],
});
const MULTI = one({ type: 'array', items: { type: 'string', enum: ['red', 'green'] } });
const TITLED_MULTI = one({
  type: 'array',
  items: {
    anyOf: [
      { const: 'r', title: 'Red' },
      { const: 'g', title: 'Green' },
    ],
  },
});

describe('an elicited field with choices', () => {
  it('asks with the choices and sends back the choice taken', async () => {
    const { reply, asked } = await elicitation({ message: 'Who?', schema: ENUM }, ['bob']);
    expect(asked[0]!.choices).toEqual(['ada', 'bob']);
    expect(reply).toEqual({ action: 'accept', content: { choice: 'bob' } });
  });

  for (const outside of ['carol', 'ADA', 'Bob', 'ad', 'ada bob', 'ada,bob', '["ada"]', '', 'ada\u0000', 'ａｄａ', '"ada"', 'ada", "role": "admin']) {
    it(`declines, sending nothing of it, an answer outside the enum: ${JSON.stringify(outside)}`, async () => {
      const { reply } = await elicitation({ message: 'Who?', schema: ENUM }, [outside]);
      expect(reply).toEqual({ action: 'decline' });
    });
  }

  it('sends the choice itself for an answer that matches it once trimmed', async () => {
    expect((await elicitation({ message: 'Who?', schema: ENUM }, ['  ada\n'])).reply).toEqual({ action: 'accept', content: { choice: 'ada' } });
  });

  it("takes a titled option's const, and declines its title or anything else", async () => {
    expect((await elicitation({ message: 'Who?', schema: TITLED }, ['a1'])).reply).toEqual({ action: 'accept', content: { choice: 'a1' } });
    for (const outside of ['Ada', 'b', 'c3']) expect((await elicitation({ message: 'Who?', schema: TITLED }, [outside])).reply).toEqual({ action: 'decline' });
  });

  it("sends a multi-select's choice as a list of that one choice, and declines an answer outside its items", async () => {
    const { reply, asked } = await elicitation({ message: 'Colour?', schema: MULTI }, ['green']);
    expect(asked[0]!.choices).toEqual(['red', 'green']);
    expect(reply).toEqual({ action: 'accept', content: { choice: ['green'] } });
    for (const outside of ['blue', 'red,green', 'red green', '["red","blue"]']) {
      expect((await elicitation({ message: 'Colour?', schema: MULTI }, [outside])).reply).toEqual({ action: 'decline' });
    }
    expect((await elicitation({ message: 'Colour?', schema: TITLED_MULTI }, ['g'])).reply).toEqual({ action: 'accept', content: { choice: ['g'] } });
    expect((await elicitation({ message: 'Colour?', schema: TITLED_MULTI }, ['Green'])).reply).toEqual({ action: 'decline' });
  });

  it('declines, asking no one, a multi-select that needs more than one choice', async () => {
    const schema = one({ type: 'array', minItems: 2, items: { type: 'string', enum: ['red', 'green'] } });
    const { reply, asked } = await elicitation({ message: 'Colours?', schema }, ['red']);
    expect(asked).toEqual([]);
    expect(reply).toEqual({ action: 'decline' });
  });

  it('declines the whole request when a later field is answered outside its choices', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, choice: { type: 'string', enum: ['ada', 'bob'] } }, required: ['name', 'choice'] };
    expect((await elicitation({ message: 'Form', schema }, ['Ada Lovelace', 'eve'])).reply).toEqual({ action: 'decline' });
    expect((await elicitation({ message: 'Form', schema }, ['Ada Lovelace', 'ada'])).reply).toEqual({
      action: 'accept',
      content: { name: 'Ada Lovelace', choice: 'ada' },
    });
  });
});

describe('an elicitation past the caps of an ask', () => {
  const refused = async (args: { message?: string; repeat?: number; schema: object }, cause: string) => {
    const { failure, asked, reply } = await elicitation(args, ['ada']);
    expect(reply).toBeNull();
    expect(asked).toEqual([]);
    expect(failure).toContain("form/elicit: the MCP server's elicitation cannot be put to the operator: ");
    expect(failure).toContain(cause);
  };

  it(`fails the call, asking no one, for a message past ${MAX_QUESTION_CHARS} characters`, async () => {
    await refused({ repeat: MAX_QUESTION_CHARS + 1, schema: one({ type: 'string' }) }, `the question is ${MAX_QUESTION_CHARS + 9} characters long`);
    await refused({ repeat: 2_000_000, schema: one({ type: 'string' }) }, "an ask's question takes at most 8000");
  });

  it(`fails the call for more than ${MAX_CHOICES} choices, a choice past ${MAX_CHOICE_CHARS} characters, no choices, or one given twice`, async () => {
    await refused(
      { schema: one({ type: 'string', enum: Array.from({ length: MAX_CHOICES + 1 }, (_, i) => `c${i}`) }) },
      `${MAX_CHOICES + 1} choices were given`,
    );
    await refused({ schema: one({ type: 'string', enum: Array.from({ length: 5000 }, (_, i) => `c${i}`) }) }, '5000 choices were given');
    await refused({ schema: one({ type: 'string', enum: ['ok', 'y'.repeat(MAX_CHOICE_CHARS + 1)] }) }, `choice 2 is ${MAX_CHOICE_CHARS + 1} characters long`);
    await refused({ schema: one({ type: 'string', enum: [] }) }, 'an ask offers at least one choice');
    await refused({ schema: one({ type: 'string', enum: ['ada', 'ada'] }) }, 'a choice is given twice');
    await refused({ schema: one({ type: 'array', items: { type: 'string', enum: Array.from({ length: 30 }, (_, i) => `m${i}`) } }) }, '30 choices were given');
  });

  it('asks a question just within the cap', async () => {
    const { reply, asked } = await elicitation({ repeat: MAX_QUESTION_CHARS - 100, schema: one({ type: 'string' }) }, ['fine']);
    expect(asked).toHaveLength(1);
    expect(reply).toEqual({ action: 'accept', content: { choice: 'fine' } });
  });
});
