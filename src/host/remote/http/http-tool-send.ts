/**
 * One call to an HTTP tool service on the wire: a POST signed as Standard Webhooks (the
 * `standardwebhooks` package) with the Pack's secret, `webhook-id` the call id, tried again
 * on a 5xx, a network error or no answer within the attempt's timeout (3 tries, with
 * backoff), each try signed anew (the same id, a fresh timestamp). Redirects are not
 * followed: a signed call and its callback token go to the configured URL and nowhere else.
 * An answer is read up to its bound (tool-output-cap.ts), and one past it is `oversized`.
 */
import { Webhook } from 'standardwebhooks';
import type { Json } from '../../../json/json.ts';
import { boundedText } from '../bounded-body.ts';
import type { ToolResult } from '../../tool-calls.ts';
import { answerBytesFor, TOOL_OUTPUT_BYTES } from '../../tool-output-cap.ts';

/** How often and how patiently a call is tried. */
export interface RetryPolicy {
  tries: number;
  /** Milliseconds to wait before try n+1 (n counts from 1). */
  backoffMs: (tried: number) => number;
  /** Milliseconds a try may take before it counts as no answer. */
  attemptTimeoutMs: number;
}

/** DESIGN.md's policy: 3 tries, 30 s each, 1 s then 4 s between them. */
export const DEFAULT_RETRY: RetryPolicy = { tries: 3, backoffMs: (tried) => 1000 * 4 ** (tried - 1), attemptTimeoutMs: 30_000 };

/** What the service said: a result now, a result later, or a failure (the model-safe text). */
export type SendOutcome = { kind: 'now'; result: ToolResult } | { kind: 'later' } | { kind: 'failed'; message: string };

/** One signed call. */
export interface SignedCall {
  url: string;
  secret: string;
  callId: string;
  tool: string;
  body: string;
}

/** Sends `call` under `policy`; never throws. */
export async function sendCall(
  call: SignedCall,
  policy: RetryPolicy,
  options: { fetch?: typeof fetch; signal?: AbortSignal; clock?: () => number; answerBytes?: number } = {},
): Promise<SendOutcome> {
  let webhook: Webhook;
  try {
    webhook = new Webhook(call.secret);
  } catch {
    return { kind: 'failed', message: `${call.tool}: the Pack's secret is not a Standard Webhooks secret (whsec_ and base64)` };
  }
  const doFetch = options.fetch ?? fetch;
  let last = '';
  for (let tried = 0; tried < policy.tries;) {
    if (options.signal?.aborted) return { kind: 'failed', message: `${call.tool}: the call was abandoned before its result came` };
    const timestamp = new Date((options.clock ?? Date.now)());
    const headers = {
      'content-type': 'application/json',
      'webhook-id': call.callId,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': webhook.sign(call.callId, timestamp, call.body),
    };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), policy.attemptTimeoutMs);
    const cancel = () => controller.abort();
    options.signal?.addEventListener('abort', cancel);
    tried++;
    try {
      const response = await doFetch(call.url, { method: 'POST', headers, body: call.body, redirect: 'manual', signal: controller.signal });
      // Counted as it streams: an answer past the bound is cut off, never read whole.
      const text = await boundedText(response, options.answerBytes ?? answerBytesFor(TOOL_OUTPUT_BYTES));
      if (response.status === 202) return { kind: 'later' };
      if (response.status >= 200 && response.status < 300) return text === null ? { kind: 'now', result: { oversized: true } } : answerOf(call.tool, text);
      if (response.status < 500) return { kind: 'failed', message: refusalOf(call.tool, response.status, text ?? '') };
      last = `it failed with HTTP ${response.status}`;
    } catch {
      last = controller.signal.aborted && !options.signal?.aborted ? `it did not answer within ${policy.attemptTimeoutMs / 1000} s` : 'it could not be reached';
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', cancel);
    }
    if (tried < policy.tries) await new Promise((resolve) => setTimeout(resolve, policy.backoffMs(tried)));
  }
  return { kind: 'failed', message: `${call.tool}: the tool service failed after ${policy.tries} tries: ${last}` };
}

/** The result in a 200's body: `{"output": …}` or `{"error": "…"}`. */
function answerOf(tool: string, text: string): SendOutcome {
  const body = jsonObject(text);
  if (body && Object.hasOwn(body, 'error') && typeof body.error === 'string') return { kind: 'now', result: { error: body.error } };
  if (body && Object.hasOwn(body, 'output') && !Object.hasOwn(body, 'error')) return { kind: 'now', result: { output: body.output! } };
  return { kind: 'failed', message: `${tool}: the tool service answered 200 without {"output": …} or {"error": "…"}` };
}

/** The failure of a 3xx or 4xx: the body's `error` when it has one, else the status named. */
function refusalOf(tool: string, status: number, text: string): string {
  const body = jsonObject(text);
  if (body && typeof body.error === 'string' && body.error.trim() !== '') return body.error;
  return `${tool}: the tool service refused the call (HTTP ${status})`;
}

function jsonObject(text: string): { [key: string]: Json } | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { [key: string]: Json }) : null;
  } catch {
    return null;
  }
}
