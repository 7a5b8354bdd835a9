/**
 * One JSON request to a search API, with a time limit and the failures every provider
 * shares, each as a short model-safe text (the API's own error body is never shown).
 */

/** The options every search provider factory takes. */
export interface SearchApiOptions {
  apiKey: string;
  /** The API's root address, for a proxy or a test server. */
  baseUrl?: string;
  /** The transport (default: the global `fetch`). */
  fetch?: typeof fetch;
  /** How long one search may take (default 15 s). */
  timeoutMs?: number;
}

/** The default time limit of one search request. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 15_000;

/** A JSON body, or the model-safe reason there is none. */
export type JsonOutcome = { ok: true; json: unknown } | { ok: false; message: string };

/** Sends one request and reads its JSON answer. */
export async function requestJson(
  options: SearchApiOptions,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  signal?: AbortSignal,
): Promise<JsonOutcome> {
  // workerd refuses a `fetch` called detached from the global object ("Illegal invocation").
  const transport = options.fetch ?? ((input, requestInit) => fetch(input, requestInit));
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await transport(url, { ...init, signal: combined });
  } catch {
    if (timeout.aborted) return { ok: false, message: 'web_search: the search provider did not answer in time' };
    if (signal?.aborted) return { ok: false, message: 'web_search: the search was cancelled' };
    return { ok: false, message: 'web_search: could not reach the search provider' };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, message: statusMessage(response.status) };
  }
  try {
    return { ok: true, json: await response.json() };
  } catch {
    if (timeout.aborted) return { ok: false, message: 'web_search: the search provider did not answer in time' };
    return { ok: false, message: 'web_search: the search provider sent an answer that is not JSON' };
  }
}

function statusMessage(status: number): string {
  if (status === 401 || status === 403) return `web_search: the search provider refused its API key (HTTP ${status})`;
  if (status === 429) return 'web_search: the search provider is rate limiting this host (HTTP 429)';
  return `web_search: the search provider failed (HTTP ${status})`;
}

/** The base address without a trailing slash. */
export function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

/** A string field of an API object, or '' when it is absent or not a string. */
export function text(value: unknown, key: string): string {
  const field = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof field === 'string' ? field : '';
}
