/**
 * The command line's operator with a form ask (issue 28): a given answer (`--answer` with the
 * object's JSON, or a script's map) is checked against the form; at the terminal each field
 * is asked in turn, an empty line takes the default or leaves an optional field out, and a
 * line that does not fit is asked again, saying why.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readForm, type AskForm } from '../../src/host/ask-form.ts';
import { OPERATOR_WINDOW_CLOSED } from '../../src/host/operator.ts';
import { commandLineOperator } from '../../src/cli/terminal-operator.ts';
import type { CliIo } from '../../src/cli/io.ts';

function io(terminal: boolean): { io: CliIo; stdin: PassThrough; err: string[] } {
  const stdin = new PassThrough();
  const err: string[] = [];
  return { io: { out: () => {}, err: (text) => err.push(text), stdin, stdinIsTerminal: terminal, env: {} }, stdin, err };
}

const read = readForm({
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email', title: 'Email' },
    guests: { type: 'integer', minimum: 0, maximum: 4, default: 1 },
    vegetarian: { type: 'boolean' },
    plan: {
      type: 'string',
      oneOf: [
        { const: 'free', title: 'Free' },
        { const: 'pro', title: 'Pro' },
      ],
    },
    days: { type: 'array', items: { type: 'string', enum: ['mon', 'tue'] } },
  },
  required: ['email', 'guests'],
});
const FORM = (read as { form: AskForm }).form;

describe('the command line operator with a form', () => {
  it('takes a given answer as the JSON text of an object that fits', async () => {
    const { io: cli } = io(false);
    expect(await commandLineOperator(['{"guests":2,"email":"a@b.co"}'], cli).ask({ question: 'Who?', form: FORM })).toEqual({
      ok: true,
      text: '{"email":"a@b.co","guests":2}',
    });
    expect(await commandLineOperator([{ email: 'a@b.co', guests: 0 }], cli).ask({ form: FORM })).toEqual({ ok: true, text: '{"email":"a@b.co","guests":0}' });
  });

  it('refuses a given answer that does not fit, naming the field, and closes the window without a terminal', async () => {
    const { io: cli, err } = io(false);
    expect(await commandLineOperator(['{"email":"a@b.co","guests":9}'], cli).ask({ question: 'Who?', form: FORM })).toEqual({
      ok: false,
      message: OPERATOR_WINDOW_CLOSED,
    });
    expect(err.join('')).toContain('the field "guests" must be at most 4, not 9');
  });

  it('asks each field in turn at the terminal, again when a line does not fit', async () => {
    const { io: cli, stdin, err } = io(true);
    const operator = commandLineOperator([], cli);
    const asked = operator.ask({ question: 'Who?', form: FORM });
    // email (not an email, then one), guests (empty: its default), vegetarian (y), plan (by its title), days (empty: left out)
    stdin.write('nobody\nada@example.com\n\ny\nPro\n\n');
    expect(await asked).toEqual({ ok: true, text: '{"email":"ada@example.com","guests":1,"plan":"pro","vegetarian":true}' });
    const said = err.join('');
    expect(said).toContain('Email: a text (email)');
    expect(said).toContain('email must be an email address, such as name@example.com');
    expect(said).toContain('guests: a whole number [default: 1]');
    expect(said).toContain('plan: one of free (Free) / pro (Pro), optional');
    operator.close();
  });

  it('closes the window when the input ends before the form is filled', async () => {
    const { io: cli, stdin } = io(true);
    const operator = commandLineOperator([], cli);
    const asked = operator.ask({ form: FORM });
    stdin.end('a@b.co\n');
    expect(await asked).toEqual({ ok: false, message: OPERATOR_WINDOW_CLOSED });
    operator.close();
  });
});
