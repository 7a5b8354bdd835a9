/**
 * The kinds of wait, side by side (wait-ledger.ts holds what they share). What differs:
 *
 * - The result. An ask's is the operator's text, one of its `choices` when it has some
 *   (who answered is kept, not compared); a call's is the service's `{output}` or `{error}`,
 *   compared as canonical JSON (a retry may reorder keys).
 * - The deadline. An ask has one only when the prompt gave `timeout` (a person may take
 *   days, and the run's own deadline bounds it anyway); a call always has one (a service
 *   that lost the call would otherwise hold its chain until the run times out).
 * - When the wait starts. An ask is pending once stored; a call is `opening` while it is
 *   sent, and pending only once the service answered 202 (a call whose send died is sent
 *   again by the replay, under the same id, and its deadline is not yet running out).
 * - What the waiting chain gets from an expired or closed wait. An ask's tool call fails
 *   with OPERATOR_WINDOW_CLOSED either way (the model may ask again); a call fails with
 *   "no result within N s" or "abandoned" (tool-calls.ts), since the model can act on which.
 * - Who is told. An ask's changes go to the Worker's outbox (the inbox index,
 *   notifications): a person must learn there is something to answer. A call's do not: its
 *   service holds the callback URL already.
 * - The token's label (wait-token.ts), so an ask token is never a call token.
 */
import { sameResult, type ToolResult } from '../tool-calls.ts';
import type { WaitKindPolicy } from './wait-ledger.ts';

/** An answer to an ask: its text, and who answered as the answer said (null: nobody said). */
export interface AskAnswer {
  text: string;
  by: string | null;
}

/** What a service posts for a call: its output, or its failure text (tool-calls.ts's ToolResult). */
export type CallResult = ToolResult;

/** The policies of the kinds of wait: the module's header says each difference and why. */
export const WAIT_KINDS: { ask: WaitKindPolicy<AskAnswer>; call: WaitKindPolicy<CallResult> } = {
  ask: {
    kind: 'ask',
    noun: 'ask',
    missing: 'no-ask',
    tokenLabel: 'runvil ask token v1',
    same: (a, b) => a.text === b.text,
    misfit: (wait, answer) =>
      wait.choices && !wait.choices.includes(answer.text)
        ? {
            ok: false,
            reason: 'not-a-choice',
            status: 400,
            message: `the answer must be one of the ask's choices: ${wait.choices.map((choice) => JSON.stringify(choice)).join(', ')}`,
            choices: [...wait.choices],
          }
        : null,
    words: {
      missing: (runId, id) => `run ${runId} has no ask ${JSON.stringify(id)}`,
      taken: (wait) => `ask ${wait.id} was already answered (at ${wait.doneAt}) with another answer; an answer is taken once`,
      expired: (wait) => `ask ${wait.id} is no longer pending: it expired at ${wait.deadline}, so the answer is stale`,
      runEnded: (wait, status) => `ask ${wait.id} is no longer pending: the run has ended (${status}), so the answer is stale`,
      closed: (wait) => `ask ${wait.id} is no longer pending: the task that asked was cancelled, so the answer is stale`,
    },
  },
  call: {
    kind: 'call',
    noun: 'tool call',
    missing: 'no-call',
    tokenLabel: 'runvil tool call token v1',
    same: sameResult,
    // Any output or error is a result; its form was checked where it was read (toolResultOf).
    misfit: () => null,
    words: {
      missing: (runId, id) => `run ${runId} has no tool call ${JSON.stringify(id)}`,
      taken: (wait) => `tool call ${wait.id} already has a different result (received at ${wait.doneAt}); a result is taken once`,
      expired: (wait) => `tool call ${wait.id} is no longer waiting: its deadline passed at ${wait.deadline}, so the result is stale`,
      runEnded: (wait, status) => `tool call ${wait.id} is no longer waiting: the run has ended (${status}), so the result is stale`,
      closed: (wait) => `tool call ${wait.id} is no longer waiting: the task that made it was cancelled, so the result is stale`,
    },
  },
};
