#!/usr/bin/env node
/**
 * A chat bridge for Runvil's asks, as a small Node server: Runvil pushes `ask.created` to
 * `POST /runvil` (a `notify:` entry of runvil.yaml); the bridge verifies the signature with
 * the `standardwebhooks` package and posts the question to a Slack-compatible incoming
 * webhook, the ask's choices as buttons. When someone presses a button, Slack posts the
 * interaction to `POST /slack/actions`; the bridge checks Slack's request signature and
 * relays the choice to the ask's `answer_url`, with the ask's own token (which answers that
 * ask and nothing else) and `answered_by` set to who pressed it. An ask with a `form` is
 * posted with its fields listed (type, options, required, default) and a text input: the
 * person replies with the filled form as a JSON object, which the bridge relays as
 * `{"answer": {...}}`; Runvil checks it against the form, and a refusal naming the field is
 * said back in the chat. `ask.closed` posts a line saying how the ask ended (answered
 * elsewhere, expired, cancelled).
 *
 *   RUNVIL_NOTIFY_SECRET=whsec_... SLACK_WEBHOOK_URL=https://hooks.slack.com/services/... \
 *   SLACK_SIGNING_SECRET=... PORT=8790 node examples/chat-bridge/bridge.mjs
 *
 * The asks waiting for a button are kept in memory: a restarted bridge finds its open asks
 * again with `GET /asks?status=pending` (API token), or simply lets Runvil redeliver.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';

/** Slack refuses a request signed more than 5 minutes away from now; so does the bridge. */
const SLACK_TOLERANCE_S = 300;

/** One line per field of a form: its name, label, type or options, whether required, its default. */
export function formLines(form) {
  const required = new Set(Array.isArray(form.required) ? form.required : []);
  return Object.entries(form.properties ?? {}).map(([name, field]) => {
    const items = field.type === 'array' ? (field.items ?? {}) : field;
    const options = Array.isArray(items.enum)
      ? items.enum
      : Array.isArray(items.oneOf ?? items.anyOf)
        ? (items.oneOf ?? items.anyOf).map((o) => o.const)
        : null;
    const kind = options
      ? `${field.type === 'array' ? 'some of' : 'one of'} ${options.map((o) => JSON.stringify(o)).join(', ')}`
      : (field.format ?? field.type);
    const label = field.title && field.title !== name ? ` (${field.title})` : '';
    const fallback = field.default !== undefined ? `, default ${JSON.stringify(field.default)}` : '';
    return `• \`${name}\`${label}: ${kind}${required.has(name) ? ', required' : ''}${fallback}`;
  });
}

/** The Slack message for a pending ask: its question, and a button per choice, or its form's fields and an input for the JSON reply. */
export function askMessage(ask) {
  const title = `*${ask.prompt}* asks: ${ask.question ?? '(no question: any text will do)'}`;
  const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: title } }];
  if (ask.form) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: formLines(ask.form).join('\n') } });
    blocks.push({
      type: 'input',
      block_id: `runvil-form:${ask.run_id}:${ask.ask_id}`,
      dispatch_action: true,
      label: { type: 'plain_text', text: 'Reply with the form as JSON' },
      element: { type: 'plain_text_input', action_id: 'form', multiline: true, placeholder: { type: 'plain_text', text: '{"field": "value"}' } },
    });
  } else if (ask.choices) {
    blocks.push({
      type: 'actions',
      block_id: `runvil:${ask.run_id}:${ask.ask_id}`,
      elements: ask.choices.map((choice, i) => ({
        type: 'button',
        action_id: `choice-${i}`,
        text: { type: 'plain_text', text: choice },
        value: JSON.stringify({ run_id: ask.run_id, ask_id: ask.ask_id, answer: choice }),
      })),
    });
  } else {
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `Answer with \`POST ${ask.answer_url}\`` }] });
  }
  if (ask.expires_at) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `Closes at ${ask.expires_at}` }] });
  return { text: title, blocks };
}

/** True when a Slack request carries a good `x-slack-signature` for `body` under `secret`. */
export function slackSigned(secret, headers, body, now = Date.now()) {
  const timestamp = headers['x-slack-request-timestamp'];
  const signature = headers['x-slack-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string' || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(now / 1000 - Number(timestamp)) > SLACK_TOLERANCE_S) return false;
  const expected = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
}

/**
 * The bridge's request handler. `options`: `notifySecret` (whsec_..., runvil.yaml's
 * notify secret), `slackWebhookUrl`, `slackSigningSecret`, and `fetch` (for tests).
 */
export function createBridge({ notifySecret, slackWebhookUrl, slackSigningSecret, fetch = globalThis.fetch }) {
  const webhook = new Webhook(notifySecret);
  /** The asks waiting for a button, by `run_id/ask_id`: their token and answer URL. */
  const open = new Map();
  const post = (message) => fetch(slackWebhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) });

  async function fromRunvil(headers, body) {
    let event;
    try {
      event = webhook.verify(body, headers);
    } catch {
      return { status: 401, body: 'bad signature' };
    }
    const { type, data } = event;
    if (type === 'ask.created') {
      open.set(`${data.run_id}/${data.ask_id}`, { token: data.token, answer_url: data.answer_url });
      const sent = await post(askMessage(data));
      // Not posted: a 5xx makes Runvil deliver it again later, under the same webhook-id.
      if (!sent.ok) return { status: 502, body: `the chat answered ${sent.status}` };
    } else if (type === 'ask.closed') {
      open.delete(`${data.run_id}/${data.ask_id}`);
      const by = data.answered_by ? ` by ${data.answered_by}` : '';
      await post({ text: `Ask ${data.ask_id} of run ${data.run_id.slice(0, 8)} closed: ${data.reason}${by}.` });
    }
    return { status: 204, body: '' };
  }

  async function fromSlack(headers, body) {
    if (!slackSigned(slackSigningSecret, headers, body)) return { status: 401, body: 'bad signature' };
    const payload = JSON.parse(new URLSearchParams(body).get('payload') ?? 'null');
    const action = payload?.actions?.[0];
    if (!action || typeof action.value !== 'string') return { status: 400, body: 'no action' };
    const chosen = action.type === 'plain_text_input' ? formReply(action) : JSON.parse(action.value);
    if ('problem' in chosen) return { status: 200, body: chosen.problem };
    const { run_id, ask_id, answer } = chosen;
    const ask = open.get(`${run_id}/${ask_id}`);
    if (!ask) return { status: 200, body: 'This ask is no longer open.' };
    const who = payload.user?.username ?? payload.user?.name ?? payload.user?.id ?? 'slack';
    const response = await fetch(ask.answer_url, {
      method: 'POST',
      headers: { authorization: `Bearer ${ask.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ answer, answered_by: String(who).slice(0, 200) }),
    });
    const text = await response.text();
    if (response.ok) return { status: 200, body: `Answered ${typeof answer === 'string' ? `"${answer}"` : JSON.stringify(answer)}.` };
    // 409: answered with another answer already (someone was quicker), or closed.
    const message = JSON.parse(text || '{}')?.error?.message ?? `Runvil answered ${response.status}`;
    return { status: 200, body: `Not taken: ${message}` };
  }

  /** A form's JSON reply typed into the message's input: the ask it answers and the object, or what to say back. */
  function formReply(action) {
    const [, run_id, ask_id] = /^runvil-form:([^:]+):(.+)$/.exec(String(action.block_id)) ?? [];
    if (!run_id) return { problem: 'This input answers no ask.' };
    let answer;
    try {
      answer = JSON.parse(action.value);
    } catch {
      return { problem: 'Not taken: reply with the form as a JSON object, such as {"field": "value"}.' };
    }
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
      return { problem: "Not taken: the reply must be a JSON object of the form's fields." };
    return { run_id, ask_id, answer };
  }

  return async function handle(request, response) {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
    let outcome = { status: 404, body: 'not found' };
    try {
      if (request.method === 'POST' && request.url === '/runvil') outcome = await fromRunvil(headers, body);
      else if (request.method === 'POST' && request.url === '/slack/actions') outcome = await fromSlack(headers, body);
    } catch (error) {
      console.error(`chat-bridge: ${request.url}: ${error instanceof Error ? error.message : String(error)}`);
      outcome = { status: 502, body: 'the bridge failed; Runvil retries' };
    }
    response.writeHead(outcome.status, { 'content-type': 'text/plain; charset=utf-8' }).end(outcome.body);
  };
}

// Run directly: serve the bridge on 127.0.0.1:$PORT.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const need = (name) => process.env[name] || (console.error(`chat-bridge: set ${name}`), process.exit(1));
  const handler = createBridge({
    notifySecret: need('RUNVIL_NOTIFY_SECRET'),
    slackWebhookUrl: need('SLACK_WEBHOOK_URL'),
    slackSigningSecret: need('SLACK_SIGNING_SECRET'),
  });
  const port = Number(process.env.PORT || 8790);
  createServer(handler).listen(port, '127.0.0.1', () => console.log(`chat-bridge: listening on http://127.0.0.1:${port} (POST /runvil, POST /slack/actions)`));
}
