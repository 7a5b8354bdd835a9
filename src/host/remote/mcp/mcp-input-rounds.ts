/**
 * A tool call to a 2026-07-28 MCP server that answers `input_required` (DESIGN.md Part 3, "MCP
 * servers of the 2026-07-28 protocol"): each round's input requests and request state are
 * kept with the call's effect (call-rounds.ts) before anything is asked; each elicitation
 * becomes a form ask of the run (mcp-elicitation.ts's askForm); when the asks are answered,
 * the retry goes with the kept state and the answers (`inputResponses`), and its answer (a
 * result, or a further round) is the call's. A run evicted while the operator decides comes
 * back on the answer, replays to this call, finds the round it was on, and sends the retry:
 * never the call again from its start.
 *
 * A server is not trusted to end its rounds: a call takes at most MAX_INPUT_ROUNDS of them,
 * a round at most MAX_INPUT_REQUESTS requests and a request state of at most
 * MAX_REQUEST_STATE_CHARS (it is stored with the run), and what it asks must be a form
 * elicitation an operator can fill (ask-form.ts bounds its schema). A round with no request
 * but a state is retried at once (the server wants the state back), counted as a round.
 */
import type { Json } from '../../../json/json.ts';
import { MemoryCallRounds, type CallRoundsRecord } from '../../call-rounds.ts';
import type { ToolContext } from '../../pack.ts';
import { askForm, elicitationProblem } from './mcp-elicitation.ts';
import type { CallResult, Elicitation, InputRequired, RoundRetry } from './mcp-connection.ts';

/** The most `input_required` rounds one call takes. */
export const MAX_INPUT_ROUNDS = 10;
/** The most input requests one round makes. */
export const MAX_INPUT_REQUESTS = 10;
/** The longest request state a round keeps, in characters. */
export const MAX_REQUEST_STATE_CHARS = 64 * 1024;

/** The call's final answer, or why it cannot go on (said to the model after the tool's id). */
export type RoundsOutcome = { result: CallResult } | { refused: string };

/** What a call in rounds is given: how to send the call (no retry) or a round's retry, and how to wait on an operator without the silence watchdog. */
export interface RoundsCall {
  send(retry?: RoundRetry): Promise<CallResult>;
  waiting<T>(work: () => Promise<T>): Promise<T>;
}

/** The message of a call whose 2025-11-25 elicitation was asked on a connection the run no longer has. */
export const HELD_QUESTION_LOST =
  "the MCP server's question could not be held: the run was evicted while the call was open, and a server of the 2025-11-25 protocol asks only on the open call; call the tool again";

/** Sends the call, or goes on from the round kept for it, through every round to the server's result. */
export async function callInRounds(call: RoundsCall, context: ToolContext): Promise<RoundsOutcome> {
  const effect = context.effect ?? { chain: '', seq: 0 };
  const rounds = context.effect && context.rounds ? context.rounds : new MemoryCallRounds();
  let record: CallRoundsRecord = rounds.get(effect) ?? { rounds: 0, asked: 0 };
  if (record.held) return { refused: HELD_QUESTION_LOST };
  if (!record.last) {
    const answer = await call.send();
    if (!answer.inputRequired) return { result: answer };
    const next = nextRound(record, answer.inputRequired);
    if ('refused' in next) return next;
    rounds.put(effect, (record = next));
  }
  for (;;) {
    const last = record.last!;
    const requests = Object.entries(last.input_requests as { [key: string]: Json });
    const responses: [string, unknown][] = [];
    let part = record.asked;
    for (const [key, request] of requests) {
      const outcome = await call.waiting(() => askForm(elicitationOf(request)!, context, part));
      part++;
      if ('refused' in outcome) return outcome;
      responses.push([key, outcome.result]);
    }
    const answer = await call.send({
      ...(last.request_state !== undefined ? { requestState: last.request_state } : {}),
      ...(responses.length > 0 ? { inputResponses: Object.fromEntries(responses) } : {}),
    });
    if (!answer.inputRequired) return { result: answer };
    const next = nextRound({ ...record, asked: part }, answer.inputRequired);
    if ('refused' in next) return next;
    rounds.put(effect, (record = next));
  }
}

/** The record with the server's new round kept, or why the round is refused (see the module comment). */
function nextRound(record: CallRoundsRecord, round: InputRequired): CallRoundsRecord | { refused: string } {
  const refused = (why: string) => ({ refused: `the MCP server's input_required ${why}` });
  if (record.rounds >= MAX_INPUT_ROUNDS) return refused(`came ${record.rounds + 1} times in one call; a call takes at most ${MAX_INPUT_ROUNDS} rounds`);
  const state = round.requestState;
  if (state !== undefined && typeof state !== 'string') return refused('carries a request state that is not text');
  if (state !== undefined && state.length > MAX_REQUEST_STATE_CHARS)
    return refused(`carries a request state of ${state.length} characters; a round keeps at most ${MAX_REQUEST_STATE_CHARS}`);
  const requests = round.inputRequests ?? {};
  if (requests === null || typeof requests !== 'object' || Array.isArray(requests)) return refused('carries input requests that are not an object');
  const entries = Object.entries(requests as { [key: string]: unknown });
  if (entries.length === 0 && state === undefined) return refused('asks for nothing and carries no request state: there is nothing to send back');
  if (entries.length > MAX_INPUT_REQUESTS) return refused(`makes ${entries.length} input requests; a round makes at most ${MAX_INPUT_REQUESTS}`);
  for (const [key, request] of entries) {
    const shown = JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}...` : key);
    const elicitation = elicitationOf(request);
    if (elicitation === null)
      return refused(`asks (${shown}) for what Runvil's MCP Packs do not offer: only form elicitation (elicitation/create) is answered`);
    const problem = elicitationProblem(elicitation);
    if (problem !== null) return { refused: problem };
  }
  return {
    rounds: record.rounds + 1,
    asked: record.asked,
    last: { ...(state !== undefined ? { request_state: state } : {}), input_requests: requests as Json },
  };
}

/** A form elicitation's message and schema, or null for any other input request (sampling, roots, a URL elicitation). */
function elicitationOf(request: unknown): Elicitation | null {
  if (request === null || typeof request !== 'object') return null;
  const { method, params } = request as { method?: unknown; params?: { message?: unknown; requestedSchema?: unknown; mode?: unknown } };
  if (method !== 'elicitation/create' || params === null || typeof params !== 'object') return null;
  if (params.mode !== undefined && params.mode !== 'form') return null;
  return { message: typeof params.message === 'string' ? params.message : '', requestedSchema: params.requestedSchema };
}
