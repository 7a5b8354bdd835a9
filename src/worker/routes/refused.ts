/**
 * The API error of a run object's refusal: its status and message, recognised by its reason
 * (run-object-api.ts RefusalReason), never by its text. An object that holds no run is
 * answered naming the run id the request gave; an answer outside an ask's choices lists them,
 * and one that does not fit an ask's form names the form's field (`form_field`).
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
    case 'not-a-fit':
      return new ApiError(refusal.status, refusal.message, { field: 'answer', ...(refusal.field !== undefined ? { form_field: refusal.field } : {}) });
    default:
      return new ApiError(refusal.status, refusal.message);
  }
}
