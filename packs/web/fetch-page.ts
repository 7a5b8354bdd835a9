/**
 * The page fetcher behind web/fetch: the global `fetch` with a time limit and a size limit,
 * http and https only, redirects followed, HTML turned into readable text, text and JSON
 * passed through. Every failure is a short model-safe text that starts `web_fetch: `.
 * Platform-neutral: only `fetch`, `AbortSignal` and `TextDecoder`, so it runs in workerd.
 */
import { htmlToReadableText } from './html-text.ts';

/** What fetching one page answers: its readable text, or a model-safe failure text. */
export type PageOutcome = { ok: true; text: string } | { ok: false; message: string };

/** Fetches one page for web/fetch. A Host or a test fixture may supply its own. */
export type PageFetcher = (url: string, signal?: AbortSignal) => Promise<PageOutcome>;

/** The limits and transport of the default page fetcher. */
export interface PageFetcherOptions {
  /** How long one fetch may take, body included (default 15 s). */
  timeoutMs?: number;
  /** How many bytes of body are read at most; the rest is dropped (default 2 MiB). */
  maxBytes?: number;
  /** The transport (default: the global `fetch`). */
  fetch?: typeof fetch;
}

/** The default time limit of one page fetch. */
export const DEFAULT_FETCH_TIMEOUT_MS = 15_000;

/** The default size limit of one page body. */
export const DEFAULT_FETCH_MAX_BYTES = 2 * 1024 * 1024;

/** The model-safe failure of a page that could not be fetched; the fixture answers it too. */
export function couldNotFetch(url: string, detail?: string): string {
  return `web_fetch: could not fetch ${url}${detail === undefined ? '' : ` (${detail})`}`;
}

const ACCEPT = 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,text/*;q=0.8,*/*;q=0.1';
const USER_AGENT = 'Runvil-web-fetch/0.1';

/** Builds the default page fetcher over the global `fetch`. */
export function createPageFetcher(options: PageFetcherOptions = {}): PageFetcher {
  const timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_FETCH_MAX_BYTES;
  // workerd refuses a `fetch` called detached from the global object ("Illegal invocation").
  const transport = options.fetch ?? ((input, init) => fetch(input, init));

  return async (url, signal) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { ok: false, message: `web_fetch: not a valid url: ${url}` };
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      return { ok: false, message: `web_fetch: only http and https urls can be fetched, not ${url}` };
    }

    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const failure = (): PageOutcome => {
      if (timeout.aborted) return { ok: false, message: couldNotFetch(url, `no answer within ${seconds(timeoutMs)}`) };
      if (signal?.aborted) return { ok: false, message: couldNotFetch(url, 'cancelled') };
      return { ok: false, message: couldNotFetch(url) };
    };

    try {
      const response = await transport(target.href, {
        signal: combined,
        redirect: 'follow',
        headers: { accept: ACCEPT, 'user-agent': USER_AGENT },
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        return { ok: false, message: couldNotFetch(url, `HTTP ${response.status}`) };
      }
      const type = mediaType(response.headers.get('content-type'));
      const kind = type === null ? null : kindOf(type.essence);
      if (type !== null && kind === null) {
        await response.body?.cancel().catch(() => undefined);
        return { ok: false, message: `web_fetch: ${url} is ${safeType(type.essence)}, which is not a text page` };
      }
      const body = await readLimited(response, maxBytes);
      const text = decode(body.bytes, type?.charset ?? metaCharset(body.bytes));
      const readable = (kind ?? sniff(text)) === 'html' ? htmlToReadableText(text, response.url || target.href) : text;
      const note = body.truncated ? `\n\n[web_fetch: the page was cut off after ${size(maxBytes)}]` : '';
      return { ok: true, text: readable + note };
    } catch {
      // The deeper cause (DNS, TLS, reset) is left out of the model-safe text on purpose.
      return failure();
    }
  };
}

type Kind = 'html' | 'text';

function kindOf(essence: string): Kind | null {
  if (essence === 'text/html' || essence === 'application/xhtml+xml') return 'html';
  if (essence.startsWith('text/')) return 'text';
  if (essence === 'application/json' || essence.endsWith('+json')) return 'text';
  if (essence === 'application/xml' || essence.endsWith('+xml')) return 'text';
  if (essence === 'application/javascript' || essence === 'application/ecmascript') return 'text';
  return null;
}

/** A body served with no content type is HTML when it starts like HTML, else plain text. */
function sniff(text: string): Kind {
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(text.slice(0, 1024)) ? 'html' : 'text';
}

function mediaType(header: string | null): { essence: string; charset?: string } | null {
  if (header === null || header.trim() === '') return null;
  const [essence = '', ...params] = header.split(';');
  const charset = params.map((param) => /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(param)?.[1]).find((value) => value !== undefined);
  return { essence: essence.trim().toLowerCase(), ...(charset ? { charset } : {}) };
}

// The content type is the server's text: only a well-formed media type reaches the model.
function safeType(essence: string): string {
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,40}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,60}$/.test(essence) ? essence : 'of an unknown type';
}

async function readLimited(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - total;
    if (value.byteLength >= room) {
      chunks.push(value.subarray(0, room));
      total += room;
      // A body of exactly the limit is whole; one more read tells (a failed read means more).
      truncated =
        value.byteLength > room ||
        !(await reader.read().then(
          (next) => next.done,
          () => false,
        ));
      break;
    }
    chunks.push(value);
    total += value.byteLength;
  }
  if (truncated) await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}

function decode(bytes: Uint8Array, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    // An unknown or unsupported charset label: UTF-8 is the web's default and the best guess.
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The charset an HTML page declares in a `<meta>` near its start, read as ASCII. */
function metaCharset(bytes: Uint8Array): string | undefined {
  const head = String.fromCharCode(...bytes.subarray(0, 1024));
  return /<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_:.-]+)/i.exec(head)?.[1];
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function size(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
