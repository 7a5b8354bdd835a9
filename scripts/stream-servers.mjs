/**
 * Model servers that stream, on loopback, for the streaming e2e check (e2e-stream.mjs) and
 * the Worker's streaming benchmark (bench/worker-stream.ts): an OpenAI-compatible one
 * (`POST /v1/chat/completions`, `data:` chunks, usage last, `[DONE]`) and one that speaks
 * Anthropic's Messages stream (`POST /v1/messages`: message_start, content_block_start,
 * text_delta after text_delta, content_block_stop, message_delta, message_stop). Each reply
 * is `pieces(request body)`, written one piece per chunk; `holdAfter` pieces in, a reply
 * waits until `release()` (so a check can act mid-step); `paceMs` spaces the pieces.
 */
import { createServer } from 'node:http';

/** The pieces of the default reply: `streamed: <the last message's text>`, word by word. */
export function defaultPieces(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const content = typeof last?.content === 'string' ? last.content : Array.isArray(last?.content) ? last.content.map((part) => part.text ?? '').join('') : '';
  return `streamed: ${content}`.split(/(?= )/);
}

const sse = (event, data) => (event ? `event: ${event}\n` : '') + `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** What each wire writes around the pieces. */
const WIRES = {
  openai: {
    path: '/v1/chat/completions',
    start: () => sse(null, { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }),
    piece: (text) => sse(null, { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text } }] }),
    end: (count) =>
      sse(null, { object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
      sse(null, { object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 7, completion_tokens: count } }) +
      sse(null, '[DONE]'),
  },
  anthropic: {
    path: '/v1/messages',
    start: () =>
      sse('message_start', {
        type: 'message_start',
        message: { id: 'msg_e2e', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 7, output_tokens: 1 } },
      }) + sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    piece: (text) => sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
    end: (count) =>
      sse('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: count } }) +
      sse('message_stop', { type: 'message_stop' }),
  },
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts a streaming model server of `wire` ('openai' | 'anthropic') on 127.0.0.1. Answers
 * `{ url, requests, holdAfter, paceMs, release(), nextRequest(), close() }`: `url` is the base
 * its provider takes (OPENAI_BASE_URL ends in /v1), `requests` the bodies received.
 */
export async function startStreamServer(wire, { pieces = defaultPieces } = {}) {
  const shape = WIRES[wire];
  let released = null;
  const waiters = [];
  const state = {
    requests: [],
    /** Pieces a reply writes before it waits for release(); null: never waits. */
    holdAfter: null,
    /** Milliseconds between two pieces (0: as fast as the socket takes them). */
    paceMs: 0,
    /** When each piece of the latest reply was written (performance.now(), ms). */
    wroteAt: [],
    /** Lets every reply waiting at holdAfter go on. */
    release() {
      released?.resolve();
      released = null;
    },
    /** Settles with the body of the request number `n` (1-based) once it has come. */
    async nextRequest(n) {
      while (state.requests.length < n) await new Promise((resolve) => waiters.push(resolve));
      return state.requests[n - 1];
    },
  };
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST' || request.url !== shape.path) {
      response.writeHead(404).end();
      return;
    }
    let text = '';
    for await (const chunk of request) text += chunk;
    const body = JSON.parse(text);
    const reply = pieces(body);
    let gone = false;
    response.on('close', () => (gone = true));
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(shape.start());
    state.requests.push(body);
    state.wroteAt = [];
    for (const resolve of waiters.splice(0)) resolve();
    for (let i = 0; i < reply.length && !gone; i++) {
      if (state.holdAfter !== null && i === state.holdAfter) {
        released ??= deferred();
        await released.promise;
      }
      if (gone) break;
      response.write(shape.piece(reply[i]));
      state.wroteAt.push(performance.now());
      if (state.paceMs > 0) await sleep(state.paceMs);
    }
    if (!gone) response.end(shape.end(reply.length));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return Object.assign(state, {
    url: wire === 'openai' ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}
