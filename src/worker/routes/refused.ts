/**
 * The API error of a run object's refusal: its status and message, recognised by its reason
 * (run-object-api.ts RefusalReason), never by its text. An object that holds no run is
 * answered naming the run id the request gave; an answer outside an ask's choices lists them.
 */
import { ApiError } from '../http/http-error.ts';
import type { Refusal } from '../run-object/run-object-api.ts';

/** The API error of `refusal`, by the run object of `runId`. */
export function refused(refusal: Refusal, runId: string): ApiError {
  switch (refusal.reason) {
    case 'no-run':
      return new ApiError(refusal.status, `no run ${JSON.stringify(runId)}`);
    case 'not-a-choice':
      return new ApiError(refusal.status, refusal.message, { field: 'answer', choices: refusal.choices ?? [] });
    default:
      return new ApiError(refusal.status, refusal.message);
  }
}
