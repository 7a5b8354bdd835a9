/**
 * Asks with forms in workerd (issue 28, DESIGN.md Part 3 "Asks with forms"): the pending ask
 * carries its form in GET /runs/:id and GET /asks; POST /runs/:id/asks/:ask_id takes a JSON
 * object that fits the form, refusing anything else with 400 naming the field while the ask
 * stays pending; the run then gets the object's JSON text. The ask.created notification
 * carries the form too. A fork's answers are checked the same way.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFICATION_TYPES } from '../../src/config/deployment-config.ts';
import { call, drive, getRun, json, settled, type RunView } from './app/client.ts';
import { notifications } from './app/test-worker.ts';

const FORMS = `---
name: forms
description: Asks with a form and returns what Lua read.
runvil: 0
uses: [user-input]
---
# Forms

## Ask

\`\`\`lua
local text = tools.call('user-input/ask', {
  question = 'Who is coming?',
  form = {
    type = 'object',
    properties = {
      email = { type = 'string', format = 'email', title = 'Email' },
      guests = { type = 'integer', minimum = 0, maximum = 4, default = 1 },
      plan = { type = 'string', oneOf = { { const = 'free', title = 'Free' }, { const = 'pro', title = 'Pro' } } },
      days = { type = 'array', items = { type = 'string', enum = { 'mon', 'tue' } } },
    },
    required = { 'email', 'guests' },
  },
})
local answer = json.decode(text)
return text .. '|' .. answer.email .. '|' .. answer.guests
\`\`\`
`;

const FORM = {
  type: 'object',
  properties: {
    days: { type: 'array', items: { type: 'string', enum: ['mon', 'tue'] } },
    email: { type: 'string', format: 'email', title: 'Email' },
    guests: { type: 'integer', minimum: 0, maximum: 4, default: 1 },
    plan: {
      type: 'string',
      oneOf: [
        { const: 'free', title: 'Free' },
        { const: 'pro', title: 'Pro' },
      ],
    },
  },
  required: ['email', 'guests'],
};

const answer = (runId: string, body: unknown) => call('POST', `/runs/${runId}/asks/0-1`, { body: body as object });
const error = async (response: Response): Promise<{ status: number; error: Record<string, unknown> }> => ({
  status: response.status,
  error: ((await response.json()) as { error: Record<string, unknown> }).error,
});
const start = async (): Promise<string> => (await json<{ run_id: string }>(await call('POST', '/prompts/forms/runs', { body: { args: {} } }), 202)).run_id;

beforeAll(async () => {
  await json(await call('PUT', '/prompts/forms', { body: FORMS }), 201);
});

describe('a run that asks with a form', () => {
  let runId: string;
  let first: RunView;

  beforeAll(async () => {
    runId = await start();
    first = await settled(runId);
  });

  it('suspends with the form on its pending ask, as the prompt wrote it', () => {
    expect(first.status).toBe('suspended');
    expect(first.pending).toEqual([expect.objectContaining({ kind: 'ask', ask_id: '0-1', question: 'Who is coming?', choices: null, form: FORM })]);
  });

  it('lists the form in GET /asks', async () => {
    // The index shows an ask soon after it is made, not at once: polled, as the inbox's tests do.
    for (let i = 0; ; i++) {
      const listed = await json<{ asks: { run_id: string; form: unknown }[] }>(await call('GET', '/asks?status=pending&prompt=forms'), 200);
      const ask = listed.asks.find((listedAsk) => listedAsk.run_id === runId);
      if (ask || i > 300) {
        expect(ask?.form).toEqual(FORM);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });

  it.each([
    ['a text', { answer: 'ada@example.com' }, { field: 'answer' }, /^ask 0-1 has a form: its answer is a JSON object of the form's fields/],
    [
      'a list',
      { answer: [1] },
      { field: 'answer' },
      /^`answer` must be a string, the operator's answer text, or for an ask with a form a JSON object of its fields$/,
    ],
    ['a required field left out', { answer: { email: 'ada@example.com' } }, { field: 'answer', form_field: 'guests' }, /: the field "guests" is required$/],
    [
      'a number as text',
      { answer: { email: 'ada@example.com', guests: '2' } },
      { field: 'answer', form_field: 'guests' },
      /the field "guests" must be a whole number, not the text "2"$/,
    ],
    [
      'out of bounds',
      { answer: { email: 'ada@example.com', guests: 5 } },
      { field: 'answer', form_field: 'guests' },
      /the field "guests" must be at most 4, not 5$/,
    ],
    ['not an email', { answer: { email: 'ada', guests: 1 } }, { field: 'answer', form_field: 'email' }, /the field "email" must be an email address/],
    [
      'an option by its title',
      { answer: { email: 'a@b.co', guests: 1, plan: 'Pro' } },
      { field: 'answer', form_field: 'plan' },
      /must be one of "free", "pro", not "Pro"$/,
    ],
    [
      'a field the form lacks',
      { answer: { email: 'a@b.co', guests: 1, admin: true } },
      { field: 'answer', form_field: 'admin' },
      /the form has no field "admin"/,
    ],
    [
      'a __proto__ key',
      JSON.parse('{"answer":{"email":"a@b.co","guests":1,"__proto__":{"x":1}}}'),
      { field: 'answer', form_field: '__proto__' },
      /the form has no field "__proto__"/,
    ],
  ])('refuses %s with 400 naming the field, and the ask stays pending', async (_name, body, fields, message) => {
    const refused = await error(await answer(runId, body));
    expect(refused.status).toBe(400);
    expect(refused.error).toEqual({ message: expect.stringMatching(message), ...fields });
    expect(await getRun(runId)).toEqual(first);
  });

  it('takes an object that fits, and the run completes with its JSON text', async () => {
    const view = await json<RunView>(
      await call('POST', `/runs/${runId}/asks/0-1?wait=30`, { body: { answer: { guests: 2, email: 'ada@example.com', days: ['tue'] } } }),
      200,
    );
    expect(view.status).toBe('completed');
    expect(view.result).toBe('{"days":["tue"],"email":"ada@example.com","guests":2}|ada@example.com|2');
  });

  it('takes the same object again, keys in another order, as a retry, and refuses another', async () => {
    expect((await answer(runId, { answer: { days: ['tue'], email: 'ada@example.com', guests: 2 } })).status).toBe(200);
    expect((await error(await answer(runId, { answer: { email: 'ada@example.com', guests: 3 } }))).status).toBe(409);
  });
});

describe('a free-text ask', () => {
  it('refuses an object: it has no form', async () => {
    await json(
      await call('PUT', '/prompts/plain-ask', { body: FORMS.replace('name: forms', 'name: plain-ask').replace(/form = \{[\s\S]*?\n  \},\n/, '') }),
      201,
    );
    const runId = (await json<{ run_id: string }>(await call('POST', '/prompts/plain-ask/runs', { body: { args: {} } }), 202)).run_id;
    expect((await settled(runId)).status).toBe('suspended');
    expect(await error(await answer(runId, { answer: { email: 'a@b.co' } }))).toEqual({
      status: 400,
      error: { message: 'ask 0-1 has no form: its answer is a text, not an object', field: 'answer' },
    });
  });
});

describe("a fork's answer to a form ask", () => {
  let runId: string;

  beforeAll(async () => {
    runId = await start();
    await settled(runId);
    expect((await answer(runId, { answer: { email: 'ada@example.com', guests: 1 } })).status).toBe(200);
    expect((await settled(runId)).status).toBe('completed');
  });

  it('is an object that fits, and the fork goes on with its JSON text', async () => {
    const started = await json<{ run_id: string }>(
      await call('POST', `/runs/${runId}/fork`, { body: { at: 1, answers: { '0-1': { email: 'bo@example.com', guests: 0 } } } }),
      202,
    );
    const done = await drive(started.run_id, []);
    expect(done.result).toBe('{"email":"bo@example.com","guests":0}|bo@example.com|0');
  });

  it('is refused with 400 naming the field when it does not fit', async () => {
    const refused = await error(await call('POST', `/runs/${runId}/fork`, { body: { at: 1, answers: { '0-1': { email: 'bo@example.com', guests: 9 } } } }));
    expect(refused).toEqual({
      status: 400,
      error: expect.objectContaining({
        message: '`answers`: the answer does not fit the form of the ask 0-1 ("Who is coming?"): the field "guests" must be at most 4, not 9',
      }),
    });
  });
});

describe('the ask.created notification of a form ask', () => {
  const url = 'https://chat.test/forms';
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

  afterEach(() => {
    notifications.targets = [];
  });

  it('carries the form as the pending ask does', async () => {
    notifications.targets = [{ url, secret, events: new Set(NOTIFICATION_TYPES), prompts: new Set(['forms']) }];
    const runId = await start();
    const view = await settled(runId);
    let created: { type: string; data: { run_id: string; form: unknown } } | undefined;
    for (let i = 0; created === undefined && i < 2000; i++) {
      created = notifications.sent
        .filter((sent) => sent.url === url)
        .map((sent) => new Webhook(secret).verify(sent.body, sent.headers) as { type: string; data: { run_id: string; form: unknown } })
        .find((event) => event.type === 'ask.created' && event.data.run_id === runId);
      if (created === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(created?.data).toEqual(view.pending[0]);
    expect(created?.data.form).toEqual(FORM);
  });
});
