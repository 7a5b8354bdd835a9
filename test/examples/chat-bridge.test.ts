/**
 * The chat bridge example (examples/chat-bridge/bridge.mjs) on loopback, against a local
 * stand-in for a Slack-compatible chat API (its incoming webhook and its interaction
 * callbacks) and a stand-in for Runvil's answer route: an `ask.created` signed with
 * Standard Webhooks becomes a message with a button per choice; a button press signed by
 * the chat is relayed to the ask's answer_url with the ask's token and who pressed it;
 * unsigned or badly signed requests change nothing. An ask with a form is posted with its
 * fields and an input; the JSON typed into it is relayed as the answer object.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
// @ts-ignore -- a plain ESM example, without types
import { createBridge } from '../../examples/chat-bridge/bridge.mjs';

const NOTIFY_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SLACK_SECRET = 'slack-signing-secret-of-the-test';
const TOKEN = 'a'.repeat(64);

const bodyOf = async (request: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};
const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** What the stand-ins received, and how they answer. */
const chat: { posts: any[]; status: number } = { posts: [], status: 200 };
const runvil: { answers: { path: string; authorization: string; body: any }[]; status: number } = { answers: [], status: 200 };
let chatUrl: string;
let runvilUrl: string;
let bridgeUrl: string;
const servers: Server[] = [];

beforeAll(async () => {
  const chatServer = createServer(async (request, response) => {
    chat.posts.push(JSON.parse(await bodyOf(request)));
    response.writeHead(chat.status).end();
  });
  const runvilServer = createServer(async (request, response) => {
    runvil.answers.push({ path: request.url!, authorization: request.headers.authorization ?? '', body: JSON.parse(await bodyOf(request)) });
    const body =
      runvil.status === 200
        ? { ask: { status: 'answered' }, run: { status: 'running' } }
        : { error: { message: 'ask 0-1 was already answered (at 2026-12-01T00:00:00.000Z) with another answer; an answer is taken once' } };
    response.writeHead(runvil.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  servers.push(chatServer, runvilServer);
  chatUrl = await listen(chatServer);
  runvilUrl = await listen(runvilServer);
  const bridge = createServer(createBridge({ notifySecret: NOTIFY_SECRET, slackWebhookUrl: `${chatUrl}/services/T0/B0/x`, slackSigningSecret: SLACK_SECRET }));
  servers.push(bridge);
  bridgeUrl = await listen(bridge);
});

afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  chat.posts = [];
  chat.status = 200;
  runvil.answers = [];
  runvil.status = 200;
});

const ask = (askId: string) => ({
  kind: 'ask',
  ask_id: askId,
  run_id: 'f'.repeat(64),
  prompt: 'deploy',
  task: '0',
  question: 'Deploy the api?',
  choices: ['ship', 'hold'],
  asked_at: '2026-12-01T00:00:00.000Z',
  expires_at: null,
  token: TOKEN,
  answer_url: `${runvilUrl}/runs/${'f'.repeat(64)}/asks/${askId}`,
});

/** Sends a notification to the bridge as Runvil does, signed with `secret`. */
async function notify(type: string, data: object, secret = NOTIFY_SECRET, id = `${'f'.repeat(64)}.1`): Promise<Response> {
  const body = JSON.stringify({ type, timestamp: new Date().toISOString(), data });
  const at = new Date();
  return fetch(`${bridgeUrl}/runvil`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    },
    body,
  });
}

/** Presses a button of the chat's message, as the chat posts the interaction, signed with `secret`. */
async function press(button: { value: string }, user = 'ada', secret = SLACK_SECRET): Promise<Response> {
  const body = new URLSearchParams({ payload: JSON.stringify({ type: 'block_actions', user: { id: 'U1', username: user }, actions: [button] }) }).toString();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return fetch(`${bridgeUrl}/slack/actions`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature },
    body,
  });
}

describe('the chat bridge', () => {
  it('posts an ask.created to the chat with its question and a button per choice', async () => {
    expect((await notify('ask.created', ask('0-1'))).status).toBe(204);
    expect(chat.posts).toHaveLength(1);
    const [section, actions] = chat.posts[0].blocks;
    expect(section.text.text).toBe('*deploy* asks: Deploy the api?');
    expect(actions.elements.map((button: { text: { text: string } }) => button.text.text)).toEqual(['ship', 'hold']);
  });

  it('refuses a notification that is not signed with the notify secret, posting nothing', async () => {
    expect((await notify('ask.created', ask('0-2'), 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD')).status).toBe(401);
    const unsigned = await fetch(`${bridgeUrl}/runvil`, { method: 'POST', body: JSON.stringify({ type: 'ask.created', data: ask('0-2') }) });
    expect(unsigned.status).toBe(401);
    expect(chat.posts).toEqual([]);
  });

  it("relays a button press to the ask's answer_url with the ask's token and who pressed it", async () => {
    await notify('ask.created', ask('0-3'));
    const button = chat.posts[0].blocks[1].elements[0];
    const pressed = await press(button, 'ada');
    expect(await pressed.text()).toBe('Answered "ship".');
    expect(runvil.answers).toEqual([
      { path: `/runs/${'f'.repeat(64)}/asks/0-3`, authorization: `Bearer ${TOKEN}`, body: { answer: 'ship', answered_by: 'ada' } },
    ]);
  });

  it('says so when Runvil refuses the answer (someone was quicker)', async () => {
    await notify('ask.created', ask('0-4'));
    runvil.status = 409;
    const pressed = await press(chat.posts[0].blocks[1].elements[1]);
    expect(await pressed.text()).toMatch(/^Not taken: ask 0-1 was already answered/);
  });

  it('refuses a button press not signed by the chat, or signed too long ago, answering nothing', async () => {
    await notify('ask.created', ask('0-5'));
    const button = chat.posts[0].blocks[1].elements[0];
    expect((await press(button, 'eve', 'not-the-secret')).status).toBe(401);
    const forged = await fetch(`${bridgeUrl}/slack/actions`, {
      method: 'POST',
      headers: { 'x-slack-request-timestamp': '1', 'x-slack-signature': 'v0=00' },
      body: 'payload={}',
    });
    expect(forged.status).toBe(401);
    expect(runvil.answers).toEqual([]);
  });

  it('forgets an ask once it closes, and posts how it closed', async () => {
    await notify('ask.created', ask('0-6'));
    const button = chat.posts[0].blocks[1].elements[0];
    await notify('ask.closed', { run_id: 'f'.repeat(64), ask_id: '0-6', reason: 'answered', answered_by: 'bo' }, NOTIFY_SECRET, `${'f'.repeat(64)}.2`);
    expect(chat.posts[1].text).toBe(`Ask 0-6 of run ffffffff closed: answered by bo.`);
    expect(await (await press(button)).text()).toBe('This ask is no longer open.');
    expect(runvil.answers).toEqual([]);
  });

  it('answers 502 when the chat does not take the message, so Runvil delivers it again', async () => {
    chat.status = 500;
    expect((await notify('ask.created', ask('0-7'))).status).toBe(502);
  });

  describe('with a form ask', () => {
    const FORM = {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email', title: 'Email' },
        guests: { type: 'integer', minimum: 0, default: 1 },
        plan: {
          type: 'string',
          oneOf: [
            { const: 'free', title: 'Free' },
            { const: 'pro', title: 'Pro' },
          ],
        },
        days: { type: 'array', items: { type: 'string', enum: ['mon', 'tue'] } },
      },
      required: ['email'],
    };
    const formAsk = (askId: string) => ({ ...ask(askId), choices: null, form: FORM });
    const typed = (input: { block_id: string }, value: string) => ({ type: 'plain_text_input', action_id: 'form', block_id: input.block_id, value });

    it('posts the fields, each with its type or options, and an input for the JSON reply', async () => {
      await notify('ask.created', formAsk('1-1'));
      const [, fields, input] = chat.posts[0].blocks;
      expect(fields.text.text.split('\n')).toEqual([
        '• `email` (Email): email, required',
        '• `guests`: integer, default 1',
        '• `plan`: one of "free", "pro"',
        '• `days`: some of "mon", "tue"',
      ]);
      expect(input).toMatchObject({ type: 'input', block_id: `runvil-form:${'f'.repeat(64)}:1-1`, element: { type: 'plain_text_input' } });
    });

    it('relays the JSON typed into the input as the answer object, with who typed it', async () => {
      await notify('ask.created', formAsk('1-2'));
      const input = chat.posts[0].blocks[2];
      const sent = await press(typed(input, '{"email": "ada@example.com", "guests": 2}'), 'ada');
      expect(await sent.text()).toBe('Answered {"email":"ada@example.com","guests":2}.');
      expect(runvil.answers).toEqual([
        {
          path: `/runs/${'f'.repeat(64)}/asks/1-2`,
          authorization: `Bearer ${TOKEN}`,
          body: { answer: { email: 'ada@example.com', guests: 2 }, answered_by: 'ada' },
        },
      ]);
    });

    it('says what is wrong with a reply that is no JSON object, answering nothing', async () => {
      await notify('ask.created', formAsk('1-3'));
      const input = chat.posts[0].blocks[2];
      expect(await (await press(typed(input, 'ada@example.com'))).text()).toBe('Not taken: reply with the form as a JSON object, such as {"field": "value"}.');
      expect(await (await press(typed(input, '["ada"]'))).text()).toBe("Not taken: the reply must be a JSON object of the form's fields.");
      expect(runvil.answers).toEqual([]);
    });

    it("says Runvil's refusal, which names the field, back in the chat", async () => {
      await notify('ask.created', formAsk('1-4'));
      runvil.status = 400;
      const sent = await press(typed(chat.posts[0].blocks[2], '{"email": "ada"}'));
      expect(await sent.text()).toMatch(/^Not taken: /);
    });
  });
});
