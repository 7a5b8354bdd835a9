/**
 * Run ids: a run's id is its Durable Object's id (64 hex digits), a fresh unique one for
 * an API start, and one derived from the prompt and the `webhook-id` for a webhook, so that
 * a redelivered webhook reaches the run it started the first time.
 */
import type { Env } from './env.ts';
import { ApiError } from './http-error.ts';
import type { DoId } from './platform-types.ts';
import type { RunObjectApi } from './run-object-api.ts';

const RUN_ID = /^[0-9a-f]{64}$/;

/** The run id of a webhook delivery. */
export function webhookRunId(env: Env, prompt: string, webhookId: string): DoId {
  return env.RUNS.idFromName(`hook/${prompt}/${webhookId}`);
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
