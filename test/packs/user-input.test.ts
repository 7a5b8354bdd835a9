import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { USER_INPUT_MANIFEST, USER_INPUT_PRELUDE, userInputPack } from '../../packs/user-input/index.ts';
import { OPERATOR_WINDOW_CLOSED, ScriptedOperator, type Operator } from '../../src/host/operator.ts';
import { toolContext } from './helpers.ts';
import type { Json } from '../../src/json/json.ts';

const ask = (args: Record<string, Json>, operator: Operator) => userInputPack().call('user-input/ask', args, toolContext({ operator }));

describe('user-input/ask', () => {
  it("answers the operator's text", async () => {
    expect(await ask({}, new ScriptedOperator(['hi']))).toEqual({ ok: true, output: 'hi' });
  });

  it('takes the answers in order, one per ask', async () => {
    const operator = new ScriptedOperator(['one', 'two']);
    expect(await ask({}, operator)).toEqual({ ok: true, output: 'one' });
    expect(await ask({}, operator)).toEqual({ ok: true, output: 'two' });
  });

  it("fails with the operator's model-safe message once the operator's window closed", async () => {
    const operator = new ScriptedOperator(['only']);
    await ask({}, operator);
    expect(await ask({}, operator)).toEqual({ ok: false, message: "the operator's window closed" });
    expect(OPERATOR_WINDOW_CLOSED).toBe("the operator's window closed");
  });

  it('hands the question to the operator, and asks with no question when the call has none', async () => {
    const seen: unknown[] = [];
    const operator: Operator = {
      async ask(context) {
        seen.push(context);
        return { ok: true, text: 'ok' };
      },
    };
    await ask({ question: 'Which topic?' }, operator);
    await ask({}, operator);
    expect(seen).toEqual([{ question: 'Which topic?' }, {}]);
  });

  it('hands choices and a timeout to the operator', async () => {
    const seen: unknown[] = [];
    const operator: Operator = {
      async ask(context) {
        seen.push(context);
        return { ok: true, text: 'ship' };
      },
    };
    expect(await ask({ question: 'Ship?', choices: ['ship', 'hold'], timeout: 30 }, operator)).toEqual({ ok: true, output: 'ship' });
    expect(seen).toEqual([{ question: 'Ship?', choices: ['ship', 'hold'], timeout: 30 }]);
  });

  it('hands a form to the operator and answers the filled object as its JSON text', async () => {
    const form = { type: 'object', properties: { size: { type: 'string', enum: ['s', 'm'] }, n: { type: 'integer' } }, required: ['size'] };
    const seen: unknown[] = [];
    const operator = new ScriptedOperator([{ n: 2, size: 'm' }]);
    const watching: Operator = {
      async ask(context) {
        seen.push(context);
        return operator.ask(context);
      },
    };
    expect(await ask({ question: 'Size?', form }, watching)).toEqual({ ok: true, output: '{"n":2,"size":"m"}' });
    expect(seen).toEqual([{ question: 'Size?', form }]);
  });

  it('refuses a form that is not an elicitation schema, and choices with a form, without asking', async () => {
    const operator = new ScriptedOperator(['unused']);
    expect(await ask({ form: { type: 'object', properties: { a: { type: 'object' } } } }, operator)).toEqual({
      ok: false,
      message: expect.stringMatching(/^user-input_ask: form\.properties\.a\.type must be "string", "number"/),
    });
    expect(await ask({ form: { type: 'object', properties: { a: { type: 'boolean' } } }, choices: ['x'] }, operator)).toEqual({
      ok: false,
      message: 'user-input_ask: choices and form do not go together: a form offers choices as an enum field',
    });
    expect(await ask({}, operator)).toEqual({ ok: true, output: 'unused' });
  });

  it('fails the ask with why when the answer does not fit the form', async () => {
    const form = { type: 'object', properties: { n: { type: 'integer', maximum: 3 } } };
    expect(await ask({ question: 'N?', form }, new ScriptedOperator([{ n: '2' }]))).toEqual({
      ok: false,
      message: 'the answer does not fit the form of the ask (with no id) ("N?"): the field "n" must be a whole number, not the text "2"',
    });
  });

  it('refuses choices that are not distinct non-empty strings, and a timeout that is not seconds, without asking', async () => {
    const operator = new ScriptedOperator(['unused']);
    for (const choices of [[], [1], ['a', 'a'], [''], 'yes', ['x'.repeat(201)], Array.from({ length: 26 }, (_, i) => `c${i}`), [null]] as Json[]) {
      expect(await ask({ question: 'x', choices }, operator)).toEqual({
        ok: false,
        message: 'user-input_ask: choices must be a list of 1 to 25 distinct strings of 1 to 200 characters',
      });
    }
    for (const timeout of [0, -1, '10', 2_592_001, true] as Json[]) {
      expect(await ask({ question: 'x', timeout }, operator)).toEqual({
        ok: false,
        message: 'user-input_ask: timeout must be a number of seconds above 0 and at most 2592000',
      });
    }
    expect(await ask({}, operator)).toEqual({ ok: true, output: 'unused' });
  });

  it('refuses a question that is not a string without asking', async () => {
    const operator = new ScriptedOperator(['unused']);
    expect(await ask({ question: 42 }, operator)).toEqual({ ok: false, message: 'user-input_ask: question must be a string' });
    expect(await ask({}, operator)).toEqual({ ok: true, output: 'unused' });
  });

  it('refuses a question past 8000 characters without asking, saying how long it is', async () => {
    const operator = new ScriptedOperator(['unused']);
    for (const [question, chars] of [
      ['q'.repeat(8001), 8001],
      ['q'.repeat(2_000_000), 2_000_000],
      ['😀'.repeat(8001), 8001],
    ] as const) {
      expect(await ask({ question }, operator)).toEqual({
        ok: false,
        message: `user-input_ask: question is ${chars} characters long; an ask's question takes at most 8000`,
      });
    }
    // Characters as a person counts them: 8000 emoji are 16000 UTF-16 units, and within the cap.
    expect(await ask({ question: '😀'.repeat(8000) }, operator)).toEqual({ ok: true, output: 'unused' });
  });

  it('refuses a tool id it does not have', async () => {
    expect(await userInputPack().call('user-input/tell', {}, toolContext())).toEqual({
      ok: false,
      message: 'user-input/tell: runvil/user-input has no such tool',
    });
  });
});

describe('the runvil/user-input manifest', () => {
  it('offers one trusted plain tool whose question, choices, form and timeout are optional', () => {
    expect(USER_INPUT_MANIFEST.fqName).toBe('runvil/user-input');
    expect(USER_INPUT_MANIFEST.tools).toEqual([
      {
        id: 'user-input/ask',
        description: 'Ask the operator a question and wait for the answer.',
        parameters: {
          type: 'object',
          properties: {
            question: { type: 'string', maxLength: 8000, description: expect.any(String) },
            choices: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, minItems: 1, maxItems: 25, description: expect.any(String) },
            form: { type: 'object', description: expect.stringContaining("MCP's elicitation requestedSchema") },
            timeout: { type: 'number', exclusiveMinimum: 0, maximum: 2_592_000, description: expect.any(String) },
          },
        },
        output: 'plain',
        trusted: true,
      },
    ]);
  });

  it('needs no service', () => {
    expect(USER_INPUT_MANIFEST.services).toBeUndefined();
    expect(userInputPack().unavailableReason).toBeUndefined();
  });

  it('ships the prelude exactly as the chapter prints it', () => {
    expect(USER_INPUT_MANIFEST.prelude).toBe(USER_INPUT_PRELUDE);
    expect(USER_INPUT_PRELUDE).toBe(
      [
        'local pack = ...',
        'input = {}',
        'function input.ask(...)',
        "  if select('#', ...) > 0 then",
        '    error("input.ask takes no arguments", 2)',
        '  end',
        '  return tools.call(pack .. "/ask")',
        'end',
        '',
      ].join('\n'),
    );
  });
});
