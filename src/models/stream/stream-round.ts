/**
 * One model round over HTTP, streamed: the JSON POST of http-round.ts asking for server-sent
 * events, its text passed on as it arrives, with the same retries (429, 5xx, network errors,
 * time limits, and a stream cut in the middle or silent too long) and failure messages. A
 * retry after text was passed on is said first, as a restart (provider.ts's ReplyDelta).
 * Answers that are not a stream (an error's JSON, a server that does not stream) read as
 * postJson reads them, within the same byte cap.
 */
import {
  abortableSleep,
  defaultBackoffMs,
  DEFAULT_RETRIES,
  DEFAULT_MAX_RETRY_AFTER_MS,
  DEFAULT_TIMEOUT_MS,
  durationText,
  errorText,
  excerpt,
  retryable,
  retryAfterMs,
  settle,
  type Attempt,
  type JsonPost,
  type RoundOptions,
} from '../http-round.ts';
import type { DeltaListener, ModelOutcome } from '../provider.ts';
import type { ReplyStream } from './reply-stream.ts';
import { bytesText, DEFAULT_IDLE_MS, DEFAULT_MAX_STREAM_BYTES, readReplyStream, type StreamRead } from './sse-read.ts';

/** How a streamed post reads its answer: the wire's stream parser, and the reply of a whole JSON answer. */
export interface StreamWire {
  stream: () => ReplyStream;
  whole: (answer: { status: number; json: unknown; text: string }) => ModelOutcome;
}

type StreamAttempt = Attempt | { type: 'streamed'; status: number; read: Exclude<StreamRead, { type: 'interrupted' }> };

/** Sends `post` streamed until it is answered, retrying what may pass; the reply, or the round's failure. */
export async function postStream(
  post: JsonPost,
  wire: StreamWire,
  onDelta: DeltaListener,
  options: RoundOptions = {},
  signal?: AbortSignal,
): Promise<ModelOutcome> {
  const retries = options.retries ?? DEFAULT_RETRIES;
  const sleep = options.sleep ?? abortableSleep;
  const body = JSON.stringify(post.body);
  let told = false;
  const onText = (text: string) => {
    told = true;
    onDelta({ text });
  };
  // Waits before trying again (telling a restart when text went out); false when the round was cancelled meanwhile.
  const pause = async (attempt: number, headers: Headers | null): Promise<boolean> => {
    if (told) {
      told = false;
      onDelta({ text: '', restart: true });
    }
    const asked = headers ? retryAfterMs(headers) : null;
    const wait = asked === null ? (options.backoffMs ?? defaultBackoffMs)(attempt) : Math.min(asked, options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS);
    await sleep(wait, signal);
    return !signal?.aborted;
  };
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptStream(post, body, wire, onText, options, signal);
    if (outcome.type === 'cancelled') return cancelled(post);
    if (outcome.type === 'streamed') {
      const { read, status } = outcome;
      if (read.type === 'reply') return { ok: true, reply: read.reply };
      if (attempt <= retries && read.retry) {
        if (await pause(attempt, null)) continue;
        return cancelled(post);
      }
      const tries = attempt > 1 ? `, after ${attempt} attempts` : '';
      const detail = read.detail === undefined ? '' : `: ${excerpt(read.detail, post.secrets)}`;
      return { ok: false, message: `${post.provider}: ${read.failure} (HTTP ${status}${tries})${detail}` };
    }
    if (attempt <= retries && retryable(outcome)) {
      if (await pause(attempt, outcome.type === 'answer' ? outcome.headers : null)) continue;
      return cancelled(post);
    }
    const settled = settle(post, outcome, attempt, options);
    if (!settled.ok) return settled;
    // A server that answered the whole reply at once: its text is one piece.
    const whole = wire.whole(settled);
    if (whole.ok && whole.reply.content !== '') onDelta({ text: whole.reply.content });
    return whole;
  }
}

function cancelled(post: JsonPost): ModelOutcome {
  return { ok: false, message: `${post.provider}: the round was cancelled` };
}

async function attemptStream(
  post: JsonPost,
  body: string,
  wire: StreamWire,
  onText: (text: string) => void,
  options: RoundOptions,
  signal?: AbortSignal,
): Promise<StreamAttempt> {
  const transport = options.fetch ?? ((input, init) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  // Closes the request when the reading stops early (a bound, a failure): the rest is never sent.
  const closer = new AbortController();
  const combined = AbortSignal.any(signal ? [signal, timeout, closer.signal] : [timeout, closer.signal]);
  const interrupted = (): Attempt | null => (signal?.aborted ? { type: 'cancelled' } : timeout.aborted ? { type: 'timeout' } : null);
  try {
    let response: Response;
    try {
      response = await transport(post.url, { method: 'POST', headers: post.headers, body, signal: combined });
    } catch (error) {
      return interrupted() ?? { type: 'network', detail: errorText(error) };
    }
    const maxBytes = options.maxStreamBytes ?? DEFAULT_MAX_STREAM_BYTES;
    if (!response.ok || !response.body || !isEventStream(response)) {
      const read = await readAtMost(response, maxBytes);
      // An error's beginning is enough to quote; a reply past the cap is refused, as a stream would be.
      if (read.over && response.ok)
        return {
          type: 'streamed',
          status: response.status,
          read: { type: 'failed', failure: `the reply sent more than ${bytesText(maxBytes)}, the most a reply may send`, retry: false },
        };
      if (read.ok || read.over) return { type: 'answer', status: response.status, headers: response.headers, text: read.text };
      return interrupted() ?? { type: 'cut', status: response.status, text: read.text };
    }
    const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    const read = await readReplyStream(response.body, wire.stream(), { idleMs, maxBytes, signal: combined }, onText);
    if (read.type !== 'interrupted') return { type: 'streamed', status: response.status, read };
    if (signal?.aborted) return { type: 'cancelled' };
    return {
      type: 'streamed',
      status: response.status,
      read: { type: 'failed', failure: `the stream did not end within ${durationText(timeoutMs)}`, retry: true },
    };
  } finally {
    closer.abort();
  }
}

/** The body as text, at most `maxBytes` of it (`over` past that, the rest not read); when it breaks, what arrived before. */
async function readAtMost(response: Response, maxBytes: number): Promise<{ ok: boolean; over: boolean; text: string }> {
  if (!response.body) return { ok: true, over: false, text: '' };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { ok: true, over: false, text: text + decoder.decode() };
      bytes += value.byteLength;
      if (bytes > maxBytes) return { ok: false, over: true, text };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { ok: false, over: false, text };
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
}
