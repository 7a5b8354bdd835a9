/**
 * Run ids: a run's id is its Durable Object's id (64 hex digits), a fresh unique one for
 * an API start, and one derived from the prompt and a key for a webhook (its `webhook-id`)
 * or a start with an `Idempotency-Key`, so that a redelivery or a retry reaches the run the
 * first one started: the object starts a run once (its `start` is serialized by the
 * object), so concurrent duplicates make one run.
 */
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import type { DoId } from '../platform-types.ts';
import type { RunObjectApi } from './run-object-api.ts';

const RUN_ID = /^[0-9a-f]{64}$/;

/** Where a deduplicating key comes from; each has names of its own, so a webhook cannot claim an API start's key. */
export type DedupeSource = 'hook' | 'start';

/** The longest deduplicating key (`webhook-id`), in characters. */
export const MAX_DEDUPE_KEY_CHARS = 255;

/** The longest `Idempotency-Key` of a start, in characters (DESIGN.md Part 2). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 200;

/** The run id of the start of `prompt` keyed by `key` (a webhook's `webhook-id`, a start's `Idempotency-Key`). */
export function dedupedRunId(env: Env, source: DedupeSource, prompt: string, key: string): DoId {
  return env.RUNS.idFromName(`${source}/${prompt}/${key}`);
}

/** The run id of a webhook delivery. */
export function webhookRunId(env: Env, prompt: string, webhookId: string): DoId {
  return dedupedRunId(env, 'hook', prompt, webhookId);
}

/**
 * The run id of a delivery to a trigger of runvil.yaml: its own names (`trigger/`), so a
 * sender cannot reach a run of a prompt's Standard Webhooks route, nor one trigger's
 * delivery another's run.
 */
export function triggerRunId(env: Env, trigger: string, deliveryId: string): DoId {
  return env.RUNS.idFromName(`trigger/${trigger}/${deliveryId}`);
}

/** Refuses with 400 a key that is empty, longer than `max`, or holds a character other than visible ASCII. */
export function checkDedupeKey(key: string, header: string, max = MAX_DEDUPE_KEY_CHARS): void {
  if (key.length === 0) throw new ApiError(400, `${header} is empty: send 1 to ${max} visible ASCII characters (a UUID does)`, { field: header });
  if (key.length > max) throw new ApiError(400, `${header} is ${key.length} characters long; it takes at most ${max}`, { field: header });
  const bad = /[^\x21-\x7e]/.exec(key);
  if (bad) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw new ApiError(400, `${header} holds the character U+${code}; it takes visible ASCII characters only (letters, digits, punctuation; no spaces)`, {
      field: header,
    });
  }
}

/** The run object of `runId`; 404 when the text is no run id of this Worker. */
export function runObject(env: Env, runId: string): RunObjectApi {
  const unknown = () => new ApiError(404, `no run ${JSON.stringify(runId)}`);
  if (!RUN_ID.test(runId)) throw unknown();
  let id: DoId;
  try {
    id = env.RUNS.idFromString(runId);
  } catch {
    throw unknown();
  }
  return env.RUNS.get(id);
}
