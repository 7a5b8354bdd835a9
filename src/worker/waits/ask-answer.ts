/**
 * Whether an answer to an ask is taken: an ask is answered once, while it is pending and
 * its run goes on, with one of its choices when it has some; the same answer again is a
 * retry (its response was lost), not an error. Each refusal says why the answer is stale
 * or wrong.
 */
import type { Refusal } from '../run-object/run-object-api.ts';
import { isFinal, type AskRecord, type RunStatus } from '../run-object/run-view.ts';

/** How an answer to `ask` (of a run whose status is `status`) is judged: taken, a retry of the answer taken, or refused. */
export function judgeAnswer(ask: AskRecord, answer: string, status: RunStatus): 'take' | 'retry' | Refusal {
  const askId = ask.ask_id;
  if (ask.state === 'answered') {
    if (ask.answer === answer) return 'retry';
    return {
      ok: false,
      reason: 'taken',
      status: 409,
      message: `ask ${askId} was already answered (at ${ask.answered_at}) with another answer; an answer is taken once`,
    };
  }
  if (ask.state === 'closed' && ask.closed_reason === 'expired') {
    return { ok: false, reason: 'expired', status: 409, message: `ask ${askId} is no longer pending: it expired at ${ask.expires_at}, so the answer is stale` };
  }
  if (isFinal(status)) {
    return { ok: false, reason: 'run-ended', status: 409, message: `ask ${askId} is no longer pending: the run has ended (${status}), so the answer is stale` };
  }
  if (ask.state === 'closed') {
    return {
      ok: false,
      reason: 'closed',
      status: 409,
      message: `ask ${askId} is no longer pending: the task that asked was cancelled, so the answer is stale`,
    };
  }
  if (ask.choices && !ask.choices.includes(answer)) {
    return {
      ok: false,
      reason: 'not-a-choice',
      status: 400,
      message: `the answer must be one of the ask's choices: ${ask.choices.map((choice) => JSON.stringify(choice)).join(', ')}`,
      choices: ask.choices,
    };
  }
  return 'take';
}
