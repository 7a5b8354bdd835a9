/**
 * An MCP server's elicitation as asks, against a server in the test's process (over the SDK's
 * in-memory transport: what is under test is the protocol, not HTTP) that sends whatever
 * elicitation a test gives it and answers what came back. A 2025-11-25 elicitation is one form
 * ask whose form is the requested schema as it stands; the server gets back the operator's
 * object only when it fits the form (an operator here answers anything: the check under test
 * is the Pack's own), else a decline; an elicitation no form ask can hold (past an ask's caps,
 * no flat form) is never asked, and the call fails saying why.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../../src/host/remote/configured-packs.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { MAX_CHOICE_CHARS, MAX_FORM_OPTIONS, MAX_QUESTION_CHARS } from '../../src/host/ask-limits.ts';
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
  // A trusted Pack's plain output is the server's text as it is; a request the SDK's client refused before Runvil saw it, the server's own words.
  if (body.startsWith('elicitation failed: ')) return { reply: body, failure: null, asked };
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
const answer = (value: object) => JSON.stringify(value);

describe('an elicitation as one form ask', () => {
  it('asks once, the message as the question and the requested schema as the form, and sends back the object', async () => {
    const { reply, asked } = await elicitation({ message: 'Who?', schema: ENUM }, [answer({ choice: 'bob' })]);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.question).toBe('Who?');
    expect(asked[0]!.form).toEqual(ENUM);
    expect(asked[0]!.choices).toBeUndefined();
    expect(asked[0]!.refusals).toEqual(['decline', 'cancel']);
    expect(reply).toEqual({ action: 'accept', content: { choice: 'bob' } });
  });

  it('asks every field in the one ask, with its title, description and default, and sends them together', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', description: 'Your full name', default: 'Ada' },
        age: { type: 'integer', minimum: 0 },
        score: { type: 'number' },
        ok: { type: 'boolean', default: true },
        choice: { type: 'string', enum: ['ada', 'bob'] },
      },
      required: ['name', 'choice'],
    };
    const { reply, asked } = await elicitation({ message: 'Form', schema }, [answer({ name: 'Ada Lovelace', age: 36, score: 9.5, ok: false, choice: 'ada' })]);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.form).toEqual(schema);
    expect(reply).toEqual({ action: 'accept', content: { name: 'Ada Lovelace', age: 36, score: 9.5, ok: false, choice: 'ada' } });
    // Optional fields may be left out; what is sent is what was given.
    expect((await elicitation({ message: 'Form', schema }, [answer({ name: 'Ada', choice: 'bob' })])).reply).toEqual({
      action: 'accept',
      content: { name: 'Ada', choice: 'bob' },
    });
  });

  it('sends decline or cancel when the operator answers so, and cancel when no one can answer', async () => {
    expect((await elicitation({ message: 'Who?', schema: ENUM }, ['decline'])).reply).toEqual({ action: 'decline' });
    expect((await elicitation({ message: 'Who?', schema: ENUM }, [' cancel\n'])).reply).toEqual({ action: 'cancel' });
    expect((await elicitation({ message: 'Who?', schema: ENUM }, [])).reply).toEqual({ action: 'cancel' });
  });
});

describe('an answer that does not fit the form', () => {
  const OUTSIDE_ENUM = [
    { choice: 'carol' },
    { choice: 'ADA' },
    { choice: 'Bob' },
    { choice: 'ad' },
    { choice: 'ada bob' },
    { choice: 'ada,bob' },
    { choice: ['ada'] },
    { choice: '' },
    { choice: 'ada\u0000' },
    { choice: 'ａｄａ' },
    { choice: ' ada' },
    { choice: null },
    {},
    { choice: 'ada', role: 'admin' },
  ];
  for (const outside of OUTSIDE_ENUM) {
    it(`declines, sending nothing of it, an answer outside the enum: ${JSON.stringify(outside)}`, async () => {
      expect((await elicitation({ message: 'Who?', schema: ENUM }, [answer(outside)])).reply).toEqual({ action: 'decline' });
    });
  }

  for (const text of ['ada', '', '["ada"]', '"ada"', 'ada", "role": "admin', '{"choice": "ada"', 'null', '42', 'declined']) {
    it(`declines an answer that is no object: ${JSON.stringify(text)}`, async () => {
      expect((await elicitation({ message: 'Who?', schema: ENUM }, [text])).reply).toEqual({ action: 'decline' });
    });
  }

  it("takes a titled option's const, and declines its title or anything else", async () => {
    expect((await elicitation({ message: 'Who?', schema: TITLED }, [answer({ choice: 'a1' })])).reply).toEqual({ action: 'accept', content: { choice: 'a1' } });
    for (const outside of ['Ada', 'b', 'c3']) {
      expect((await elicitation({ message: 'Who?', schema: TITLED }, [answer({ choice: outside })])).reply).toEqual({ action: 'decline' });
    }
  });

  it("sends a multi-select's choices as a list, and declines one outside its items", async () => {
    const { reply, asked } = await elicitation({ message: 'Colour?', schema: MULTI }, [answer({ choice: ['green'] })]);
    expect(asked[0]!.form).toEqual(MULTI);
    expect(reply).toEqual({ action: 'accept', content: { choice: ['green'] } });
    expect((await elicitation({ message: 'Colour?', schema: MULTI }, [answer({ choice: ['red', 'green'] })])).reply).toEqual({
      action: 'accept',
      content: { choice: ['red', 'green'] },
    });
    for (const outside of ['green', ['blue'], ['red', 'blue'], 'red,green', [['red']], ['red', 'red']]) {
      expect((await elicitation({ message: 'Colour?', schema: MULTI }, [answer({ choice: outside })])).reply).toEqual({ action: 'decline' });
    }
    expect((await elicitation({ message: 'Colour?', schema: TITLED_MULTI }, [answer({ choice: ['g'] })])).reply).toEqual({
      action: 'accept',
      content: { choice: ['g'] },
    });
    expect((await elicitation({ message: 'Colour?', schema: TITLED_MULTI }, [answer({ choice: ['Green'] })])).reply).toEqual({ action: 'decline' });
  });

  it('asks a multi-select that needs two or more choices, and declines fewer', async () => {
    const schema = one({ type: 'array', minItems: 2, items: { type: 'string', enum: ['red', 'green'] } });
    const { reply, asked } = await elicitation({ message: 'Colours?', schema }, [answer({ choice: ['red', 'green'] })]);
    expect(asked).toHaveLength(1);
    expect(reply).toEqual({ action: 'accept', content: { choice: ['red', 'green'] } });
    expect((await elicitation({ message: 'Colours?', schema }, [answer({ choice: ['red'] })])).reply).toEqual({ action: 'decline' });
  });

  it('declines numbers and booleans that are not of their type or out of their bounds', async () => {
    const schema = {
      type: 'object',
      properties: { age: { type: 'integer', minimum: 0, maximum: 150 }, score: { type: 'number' }, ok: { type: 'boolean' } },
      required: ['age', 'score', 'ok'],
    };
    expect((await elicitation({ message: 'Numbers', schema }, [answer({ age: 3, score: -0.5, ok: true })])).reply).toEqual({
      action: 'accept',
      content: { age: 3, score: -0.5, ok: true },
    });
    for (const outside of [
      { age: '3', score: 1, ok: true },
      { age: 2.5, score: 1, ok: true },
      { age: -1, score: 1, ok: true },
      { age: 151, score: 1, ok: true },
      { age: 3, score: '1', ok: true },
      { age: 3, score: 1, ok: 'yes' },
      { age: 3, score: 1, ok: 1 },
      { age: 3, score: 1 },
    ]) {
      expect((await elicitation({ message: 'Numbers', schema }, [answer(outside)])).reply).toEqual({ action: 'decline' });
    }
  });

  it('declines the whole request when one field of several does not fit', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, choice: { type: 'string', enum: ['ada', 'bob'] } }, required: ['name', 'choice'] };
    expect((await elicitation({ message: 'Form', schema }, [answer({ name: 'Ada Lovelace', choice: 'eve' })])).reply).toEqual({ action: 'decline' });
  });
});

describe('an elicitation no form ask can hold', () => {
  const refused = async (args: { message?: string; repeat?: number; schema: object }, cause: string) => {
    const { failure, asked, reply } = await elicitation(args, [answer({ choice: 'ada' })]);
    expect(reply).toBeNull();
    expect(asked).toEqual([]);
    expect(failure).toContain("form/elicit: the MCP server's elicitation cannot be put to the operator: ");
    expect(failure).toContain(cause);
  };

  it(`fails the call, asking no one, for a message past ${MAX_QUESTION_CHARS} characters`, async () => {
    await refused({ repeat: MAX_QUESTION_CHARS + 1, schema: one({ type: 'string' }) }, `the question is ${MAX_QUESTION_CHARS + 1} characters long`);
    await refused({ repeat: 2_000_000, schema: one({ type: 'string' }) }, "an ask's question takes at most 8000");
  });

  it(`fails the call for more than ${MAX_FORM_OPTIONS} options, an option past ${MAX_CHOICE_CHARS} characters, no options, or one given twice`, async () => {
    const options = `must be a list of 1 to ${MAX_FORM_OPTIONS} texts`;
    await refused(
      { schema: one({ type: 'string', enum: Array.from({ length: MAX_FORM_OPTIONS + 1 }, (_, i) => `c${i}`) }) },
      `form.properties.choice.enum ${options}`,
    );
    await refused({ schema: one({ type: 'string', enum: Array.from({ length: 5000 }, (_, i) => `c${i}`) }) }, options);
    await refused({ schema: one({ type: 'string', enum: ['ok', 'y'.repeat(MAX_CHOICE_CHARS + 1)] }) }, 'form.properties.choice.enum');
    await refused({ schema: one({ type: 'string', enum: [] }) }, options);
    await refused({ schema: one({ type: 'string', enum: ['ada', 'ada'] }) }, 'lists an option twice');
    await refused(
      {
        schema: one({
          type: 'string',
          oneOf: [
            { const: 'a', title: 'A' },
            { const: 'a', title: 'B' },
          ],
        }),
      },
      'lists a value (const) twice',
    );
    await refused(
      { schema: one({ type: 'array', items: { type: 'string', enum: Array.from({ length: MAX_FORM_OPTIONS + 1 }, (_, i) => `m${i}`) } }) },
      'form.properties.choice.items',
    );
  });

  it('fails the call for a schema that is no form: no fields, too many, bounds that cross, a default outside its field', async () => {
    const noForm = 'its requestedSchema is no form an operator can fill: ';
    await refused({ schema: { type: 'object', properties: {} } }, `${noForm}form.properties must be a table of at least one field`);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, { type: 'string' }]));
    await refused({ schema: { type: 'object', properties: many } }, `${noForm}form.properties has 51 fields`);
    await refused({ schema: one({ type: 'string', minLength: 5, maxLength: 2 }) }, `${noForm}form.properties.choice.minLength is above maxLength`);
    await refused({ schema: one({ type: 'integer', minimum: 5, maximum: 2 }) }, `${noForm}form.properties.choice.minimum is above maximum`);
    await refused({ schema: one({ type: 'string', enum: ['ada', 'bob'], default: 'eve' }) }, `${noForm}form.properties.choice.default does not fit the field`);
  });

  it("asks no one for a schema the SDK's client refuses itself (a nested object, no object at all)", async () => {
    for (const schema of [one({ type: 'object', properties: { a: { type: 'string' } } }), { type: 'array', items: { type: 'string' } }]) {
      const { reply, asked, failure } = await elicitation({ message: 'Nested?', schema }, [answer({ choice: 'ada' })]);
      expect(asked).toEqual([]);
      expect(failure).toBeNull();
      expect(reply).toMatch(/^elicitation failed: MCP error -32602: Invalid elicitation request/);
    }
  });

  it('asks a question just within the cap', async () => {
    const { reply, asked } = await elicitation({ repeat: MAX_QUESTION_CHARS, schema: one({ type: 'string' }) }, [answer({ choice: 'fine' })]);
    expect(asked).toHaveLength(1);
    expect(reply).toEqual({ action: 'accept', content: { choice: 'fine' } });
  });
});
