#!/usr/bin/env node
/**
 * The streaming part of the e2e check (in scripts/test.mjs's e2e step), on the real local
 * server with two model servers of this script's own on loopback (stream-servers.mjs): an
 * OpenAI-compatible one (OPENAI_BASE_URL) and one that speaks Anthropic's stream
 * (ANTHROPIC_BASE_URL). For each: `POST /prompts/:name/runs?stream=1` gets the step's
 * pieces as model_delta messages, in order, while the run is still running (the server holds
 * the rest of the reply until the check has seen them), and the pieces make the journaled
 * reply. A client that disconnects mid-step and reconnects with Last-Event-ID loses no text
 * and repeats none. The server killed mid-step (SIGKILL) and started again on the same state
 * resumes the run by replay: the step's round is sent to the model again, and the stream
 * says so (a restart delta) before the new text. Offline; state in a fresh directory.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, e2eClient, step } from './e2e-client.mjs';
import { freePort, killLocalServer, startLocalServer } from './local-server.mjs';
import { startStreamServer } from './stream-servers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const token = randomBytes(16).toString('hex');
const stateDir = join(root, `.wrangler/e2e-stream-state-${process.pid}`);
const port = await freePort();
const openai = await startStreamServer('openai');
const anthropic = await startStreamServer('anthropic');
const env = { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: 'e2e-openai-key', ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: 'e2e-anthropic-key' };
let server = null;
const { api, untilSettled } = e2eClient(`http://127.0.0.1:${port}`, token);
const base = `http://127.0.0.1:${port}`;

/** A prompt with one model step on `provider`. */
const prompt = (name, provider) => `---
name: ${name}
description: One streamed model step.
runvil: 0
models:
  writer: { provider: ${provider}, model: e2e-model }
args:
  topic: { type: string }
---
# ${name}

## Write
\`\`\`lua
return models.get('writer'):infer('Write about ' .. args.topic)
\`\`\`
`;

/** A reader of one response's server-sent messages: `next(match)`, `rest()`, `lastId()`, `cancel()`. */
function sseReader(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const queued = [];
  let buffer = '';
  let ended = false;
  let last;
  async function read() {
    for (;;) {
      if (queued.length > 0) return queued.shift();
      if (ended) return null;
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        continue;
      }
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data === undefined) continue;
        if (id !== undefined) last = id;
        queued.push({ id, data: JSON.parse(data) });
      }
    }
  }
  return {
    async next(match) {
      for (;;) {
        const message = await read();
        if (message === null) throw new Error('the stream ended before the message the check waits for');
        if (match(message)) return message;
      }
    },
    async rest() {
      const out = [];
      for (let message = await read(); message !== null; message = await read()) out.push(message);
      return out;
    },
    lastId: () => last,
    cancel: () => reader.cancel(),
  };
}

const isDelta = (message) => message.data.type === 'model_delta';
/** A step's text as a client keeps it: a restart delta replaces the text so far, any other adds to it. */
const stepText = (deltas) => deltas.reduce((text, delta) => (delta.data.restart ? delta.data.text : text + delta.data.text), '');
const textOf = (messages) =>
  messages
    .filter(isDelta)
    .map((message) => message.data.text)
    .join('');

async function streamedStart(name, topic) {
  const response = await fetch(`${base}/prompts/${name}/runs?stream=1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ args: { topic } }),
  });
  check(response.status === 200, `?stream=1 answers 200 (got ${response.status})`);
  check(response.headers.get('content-type')?.startsWith('text/event-stream'), '?stream=1 answers an event stream');
  return { runId: response.headers.get('location').replace('/runs/', ''), reader: sseReader(response) };
}

const events = (runId, lastId) => fetch(`${base}/runs/${runId}/events`, { headers: { authorization: `Bearer ${token}`, 'last-event-id': lastId } });

/** Deltas arrive before the run ends; the pieces make the journaled reply. */
async function checkDeltas(name, model, topic) {
  model.holdAfter = 2;
  const { runId, reader } = await streamedStart(name, topic);
  const first = await reader.next(isDelta);
  const second = await reader.next(isDelta);
  check(first.data.text === 'streamed:' && second.data.text === ' Write', `${name}: the first pieces come in order (${first.data.text}|${second.data.text})`);
  const running = await api('GET', `/runs/${runId}`);
  check(running.status === 'running', `${name}: the deltas arrive while the run is still running`);
  model.holdAfter = null;
  model.release();
  const rest = await reader.rest();
  const completed = rest.find((message) => message.data.type === 'model_turn_completed');
  const reply = first.data.text + second.data.text + textOf(rest);
  check(reply === `streamed: Write about ${topic}`, `${name}: the pieces make the reply (${reply})`);
  check(completed?.data.content === reply, `${name}: the journaled reply is the pieces' text`);
  check(rest.at(-1).data.type === 'run_completed', `${name}: the response ends with the run`);
  const done = await untilSettled(runId);
  check(done.result === reply, `${name}: the result is the reply`);
  step(`${name}: ${2 + rest.filter(isDelta).length} deltas before the step ended, the reply as journaled`);
}

/** A disconnect and a reconnect mid-step lose no text and repeat none. */
async function checkReconnect() {
  openai.holdAfter = 2;
  const { runId, reader } = await streamedStart('e2e-stream-openai', 'reconnects and more');
  await reader.next(isDelta);
  await reader.next(isDelta);
  const lastId = reader.lastId();
  await reader.cancel();
  // While no one listens, the model sends the rest.
  openai.holdAfter = null;
  openai.release();
  const done = await untilSettled(runId);
  const replay = sseReader(await events(runId, lastId));
  const after = await replay.rest();
  check(!after.some(isDelta), 'after the step, a reconnect gets the completed reply, no delta');
  check(after.find((m) => m.data.type === 'model_turn_completed')?.data.content === done.result, 'the completed reply is in the events');

  openai.holdAfter = 2;
  const second = await streamedStart('e2e-stream-openai', 'a reconnect mid step');
  const pieces = [await second.reader.next(isDelta), await second.reader.next(isDelta)].map((m) => m.data.text);
  const midId = second.reader.lastId();
  await second.reader.cancel();
  const again = sseReader(await events(second.runId, midId));
  const catchUp = await again.next(isDelta);
  check(
    catchUp.data.restart === true && catchUp.data.text === pieces.join(''),
    `a reconnect mid-step gets the text so far as one delta (${JSON.stringify(catchUp.data)})`,
  );
  openai.holdAfter = null;
  openai.release();
  const rest = await again.rest();
  const view = await untilSettled(second.runId);
  check(catchUp.data.text + textOf(rest) === view.result, 'the reconnected stream makes the whole reply, nothing repeated');
  step('a client that reconnects mid-step gets the text so far, then the rest: nothing lost, nothing repeated');
}

/** The server killed mid-step resumes the run by replay, and the stream says so. */
async function checkRestart() {
  openai.holdAfter = 1;
  const before = openai.requests.length;
  const { runId, reader } = await streamedStart('e2e-stream-openai', 'a restart');
  await reader.next(isDelta);
  const lastId = reader.lastId();
  await killLocalServer(server);
  server = await startLocalServer({ port, token, stateDir, env });
  // The round sent again holds after its first piece too, whoever resumed the run (this
  // request, or the alarm first): the stream is read while the step is in flight.
  const again = sseReader(await events(runId, lastId));
  const first = await again.next(isDelta);
  check(first.data.restart === true, `after the restart the step's text starts over (${JSON.stringify(first.data)})`);
  openai.holdAfter = null;
  openai.release();
  const messages = [first, ...(await again.rest())];
  const view = await untilSettled(runId);
  check(view.status === 'completed', `the run completes after the restart (${view.status})`);
  check(openai.requests.length === before + 2, `the step's round was sent again (${openai.requests.length - before} rounds)`);
  const text = stepText(messages.filter(isDelta));
  check(text === view.result, `the new attempt's text is the reply (${text})`);
  step('the server killed mid-step: the run resumed by replay, its round sent again, the stream said so');
}

try {
  server = await startLocalServer({ port, token, stateDir, env });
  step(`local server on ${base}, model servers on ${openai.url} and ${anthropic.url}`);
  await api('PUT', '/prompts/e2e-stream-openai', { body: prompt('e2e-stream-openai', 'openai'), expect: 201 });
  await api('PUT', '/prompts/e2e-stream-anthropic', { body: prompt('e2e-stream-anthropic', 'anthropic'), expect: 201 });
  await checkDeltas('e2e-stream-openai', openai, 'tides');
  await checkDeltas('e2e-stream-anthropic', anthropic, 'rivers');
  await checkReconnect();
  await checkRestart();
  step('streaming: passed');
} catch (error) {
  console.error(error);
  console.error(server?.output.slice(-4000) ?? '');
  process.exitCode = 1;
} finally {
  openai.release();
  anthropic.release();
  await killLocalServer(server);
  await openai.close();
  await anthropic.close();
  rmSync(stateDir, { recursive: true, force: true });
}
