/**
 * One model round over HTTP: a JSON POST with a time limit per attempt, retries with
 * exponential backoff on 429, 5xx, network errors and timeouts, and a Model-kind failure
 * text for everything else that names the provider, the HTTP status and an excerpt of the
 * body. Uses only `fetch`, `AbortSignal` and `setTimeout`, so it runs in Node and workerd.
 */

/** How the rounds of a provider are sent: every field has a default. */
export interface RoundOptions {
  /** How long one attempt may take, answer body included (default 60 s). */
  timeoutMs?: number;
  /** How many times a failed attempt is tried again (default 3). */
  retries?: number;
  /** The wait before retry number `retry` (1-based) when the server names none. */
  backoffMs?: (retry: number) => number;
  /** The longest wait a `retry-after` header can ask for (default 60 s). */
  maxRetryAfterMs?: number;
  /** Waits `ms`, or less when `signal` aborts (tests pass one that returns at once). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The transport (default: the global `fetch`). */
  fetch?: typeof fetch;
  /** A streamed reply's longest silence between two chunks (default 30 s). */
  idleMs?: number;
  /** The most bytes a streamed reply may send (default 8 MiB): past it the request is closed. */
  maxStreamBytes?: number;
}

/** The default time limit of one attempt. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** The default number of retries after a first failed attempt. */
export const DEFAULT_RETRIES = 3;

/** The default cap on a server's `retry-after`. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

/** The longest excerpt of a body a failure message quotes. */
export const EXCERPT_LENGTH = 200;

/** Half a second, then doubling, with a fifth of jitter so many runs do not retry in step. */
export function defaultBackoffMs(retry: number): number {
  return Math.min(8_000, 500 * 2 ** (retry - 1)) * (0.8 + Math.random() * 0.4);
}

/** One request a provider sends. */
export interface JsonPost {
  /** The provider's name, the first word of every failure message. */
  provider: string;
  /** The model asked for, named by a 404's message. */
  model: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Texts no failure message may show (the API key). */
  secrets: string[];
  /** Added to the message of a refused key (401, 403). */
  authHint?: string;
}

/** A JSON answer with its status and text (for excerpts), or the round's failure message. */
export type PostOutcome = { ok: true; status: number; json: unknown; text: string } | { ok: false; message: string };

/** How one attempt ended, before it is settled into an outcome. */
export type Attempt =
  | { type: 'answer'; status: number; headers: Headers; text: string }
  | { type: 'cut'; status: number; text: string }
  | { type: 'network'; detail: string }
  | { type: 'timeout' }
  | { type: 'cancelled' };

/** Sends `post` until it is answered, retrying what may pass; reads the answer as JSON. */
export async function postJson(post: JsonPost, options: RoundOptions = {}, signal?: AbortSignal): Promise<PostOutcome> {
  const retries = options.retries ?? DEFAULT_RETRIES;
  const sleep = options.sleep ?? abortableSleep;
  const body = JSON.stringify(post.body);
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptOnce(post, body, options, signal);
    if (outcome.type === 'cancelled') return { ok: false, message: `${post.provider}: the round was cancelled` };
    if (attempt <= retries && retryable(outcome)) {
      const asked = outcome.type === 'answer' ? retryAfterMs(outcome.headers) : null;
      const wait = asked === null ? (options.backoffMs ?? defaultBackoffMs)(attempt) : Math.min(asked, options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS);
      await sleep(wait, signal);
      if (signal?.aborted) return { ok: false, message: `${post.provider}: the round was cancelled` };
      continue;
    }
    return settle(post, outcome, attempt, options);
  }
}

async function attemptOnce(post: JsonPost, body: string, options: RoundOptions, signal?: AbortSignal): Promise<Attempt> {
  // workerd refuses a `fetch` called detached from the global object ("Illegal invocation").
  const transport = options.fetch ?? ((input, init) => fetch(input, init));
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const interrupted = (): Attempt | null => (signal?.aborted ? { type: 'cancelled' } : timeout.aborted ? { type: 'timeout' } : null);
  let response: Response;
  try {
    response = await transport(post.url, { method: 'POST', headers: post.headers, body, signal: combined });
  } catch (error) {
    return interrupted() ?? { type: 'network', detail: errorText(error) };
  }
  const read = await readText(response);
  if (read.ok) return { type: 'answer', status: response.status, headers: response.headers, text: read.text };
  return interrupted() ?? { type: 'cut', status: response.status, text: read.text };
}

/** The body as text; when the stream breaks, what arrived before it did. */
export async function readText(response: Response): Promise<{ ok: boolean; text: string }> {
  if (!response.body) return { ok: true, text: '' };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { ok: true, text: text + decoder.decode() };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { ok: false, text };
  }
}

/** Whether an attempt that ended so may pass when tried again. */
export function retryable(attempt: Attempt): boolean {
  if (attempt.type === 'answer') return attempt.status === 429 || attempt.status >= 500;
  return attempt.type !== 'cancelled';
}

/** The wait a 429 or 503 asks for: `retry-after-ms`, or `retry-after` in seconds or as a date. */
export function retryAfterMs(headers: Headers): number | null {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** An attempt's outcome: its failure message, or its body read as JSON. */
export function settle(post: JsonPost, attempt: Exclude<Attempt, { type: 'cancelled' }>, attempts: number, options: RoundOptions): PostOutcome {
  const tries = attempts > 1 ? `, after ${attempts} attempts` : '';
  const fail = (what: string, status: string, text?: string) =>
    ({ ok: false, message: `${post.provider}: ${what} (${status}${tries})${text === undefined ? '' : `: ${excerpt(text, post.secrets)}`}` }) as const;
  switch (attempt.type) {
    case 'timeout':
      return fail(`no answer within ${durationText(options.timeoutMs ?? DEFAULT_TIMEOUT_MS)}`, 'no HTTP status');
    case 'network':
      return fail(`could not reach ${post.url}`, 'no HTTP status', attempt.detail);
    case 'cut':
      return fail('the reply was cut off', `HTTP ${attempt.status}`, attempt.text);
    case 'answer':
      break;
  }
  const { status, text } = attempt;
  const http = `HTTP ${status}`;
  if (status === 401 || status === 403) return fail(`the API key was refused${post.authHint ? ` (${post.authHint})` : ''}`, http, text);
  if (status === 404) return fail(`the model ${JSON.stringify(post.model)} or the address ${post.url} is unknown`, http, text);
  if (status === 429) return fail('the provider is rate limiting this host', http, text);
  if (status >= 500) return fail('the provider failed', http, text);
  if (status < 200 || status >= 300) return fail('the provider refused the request', http, text);
  try {
    return { ok: true, status, json: JSON.parse(text) as unknown, text };
  } catch {
    return fail(looksCut(text) ? 'the reply was cut off' : 'the reply is not JSON', http, text);
  }
}

/** A failure for a JSON reply that lacks what the provider's format promises. */
export function shapeFailure(
  provider: string,
  what: string,
  reply: { status: number; text: string },
  secrets: readonly string[],
): { ok: false; message: string } {
  return { ok: false, message: `${provider}: ${what} (HTTP ${reply.status}): ${excerpt(reply.text, secrets)}` };
}

/** At most EXCERPT_LENGTH characters of `text` on one line, with every secret blanked out. */
export function excerpt(text: string, secrets: readonly string[]): string {
  let line = text.replace(/\s+/g, ' ').trim();
  for (const secret of secrets) if (secret !== '') line = line.split(secret).join('[redacted]');
  if (line === '') return '(empty body)';
  return line.length <= EXCERPT_LENGTH ? line : `${line.slice(0, EXCERPT_LENGTH - 3)}...`;
}

/** JSON text that opens an object or array it never closes: a body that stopped early. */
function looksCut(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return inString || depth > 0;
}

/** An error as text, with the reason Node's fetch keeps in `cause`. */
export function errorText(error: unknown): string {
  // Node's fetch says "fetch failed" and keeps the reason (ECONNREFUSED ...) in `cause`.
  const cause = (error as { cause?: unknown })?.cause;
  const parts = [error instanceof Error ? error.message : String(error)];
  if (cause instanceof Error && cause.message) parts.push(cause.message);
  return parts.join(': ');
}

/** A time limit as a message names it: `60 s`, or `250 ms`. */
export function durationText(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** setTimeout that ends early when the round is cancelled. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
