/**
 * `tools/call`: a call without a request state starts a run of the tool's prompt (as
 * `POST /prompts/:name/runs` does, args checked the same way) and waits for it, bounded by
 * the request; a retry that carries a request state answers the ask it names (as `POST
 * /runs/:id/asks/:ask_id` does, through the run object: first answer wins) and continues
 * that run; it never starts another. The run as it then stands is the call's result
 * (call-result.ts).
 */
import { inputResponse, ProtocolError, ProtocolErrorCode, type CallToolResult, type InputRequiredResult } from '@modelcontextprotocol/server';
import type { Json } from '../../json/json.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { runObject } from '../run-object/run-ids.ts';
import { startRun } from '../run-object/start-run.ts';
import type { AskInfo, ObjectView } from '../run-object/run-view.ts';
import { answerOf, askKey } from './ask-question.ts';
import { errorResult, type ResultShaper } from './call-result.ts';
import type { AskState } from './request-state.ts';
import type { ServedTool } from './served-tools.ts';
import type { StopFollowing } from './run-progress.ts';

/** How long a call waits for its run to stop running before it answers with the run as it stands. */
export const CALL_WAIT_MS = 30_000;

/** What a call is made with. */
export interface ToolCall {
  env: Env;
  /** The tool called: a retry knows only its name and prompt (its request state names the run). */
  tool: Pick<ServedTool, 'name' | 'prompt'> & Partial<Pick<ServedTool, 'deployed'>>;
  args: { [name: string]: unknown } | undefined;
  /** The verified request state of a retry, if any. */
  state: AskState | undefined;
  /** The retry's `inputResponses` (untrusted). */
  responses: Record<string, unknown> | undefined;
  /** `answered_by` of an answer this call gives: `mcp:<client name>`, else `mcp`. */
  answeredBy: string;
  /** Turns the run as it stands into the call's result. */
  shape: ResultShaper;
  /** Follows a run's progress until the returned stop is called with the run as the call answers it; absent without a progress token. */
  follow?: (runId: string) => StopFollowing;
}

/** The error a request state that names nothing this call may continue gets: the protocol's, as the SDK words it. */
export function invalidState(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', { reason: 'invalid_request_state' });
}

/** Performs a call. */
export async function callTool(call: ToolCall): Promise<CallToolResult | InputRequiredResult> {
  try {
    return await performCall(call);
  } catch (error) {
    // The protocol's errors (and the API's, whose messages are written for callers) go out as they are; anything else is a bug whose text stays here.
    if (error instanceof ProtocolError) throw error;
    if (error instanceof ApiError && error.status < 500) return errorResult(error.message);
    console.error('tools/call failed:', error);
    return errorResult('internal error: the server failed to perform this call; the failure is logged');
  }
}

async function performCall(call: ToolCall): Promise<CallToolResult | InputRequiredResult> {
  if (call.state !== undefined) return continueRun(call, call.state);
  const request = {
    prompt: call.tool.prompt,
    args: (call.args ?? {}) as { [name: string]: Json },
    ...(call.tool.deployed ? { deployed: call.tool.deployed } : {}),
  };
  let started: { view: ObjectView };
  try {
    if (call.follow) {
      // Started at once, so its progress can be followed while the call waits (a second start of the same id waits and starts nothing).
      const id = call.env.RUNS.newUniqueId();
      await startRun(call.env, { ...request, id, waitMs: 0 });
      const stop = call.follow(id.toString());
      try {
        started = await startRun(call.env, { ...request, id, waitMs: CALL_WAIT_MS });
      } catch (error) {
        await stop(null);
        throw error;
      }
      await stop(started.view);
    } else {
      started = await startRun(call.env, { ...request, waitMs: CALL_WAIT_MS });
    }
  } catch (error) {
    // The args do not fit the prompt (400, naming the arg): the caller's model can correct them.
    if (error instanceof ApiError && error.status === 400) return errorResult(error.message);
    throw error;
  }
  return call.shape(started.view);
}

async function continueRun(call: ToolCall, state: AskState): Promise<CallToolResult | InputRequiredResult> {
  // A state minted for another tool's call is another run's: it continues nothing here.
  if (state.tool !== call.tool.name) throw invalidState();
  const run = runObject(call.env, state.run);
  const response = inputResponse(call.responses, askKey(state.ask));
  const accepted = response.kind === 'elicit' && response.action === 'accept';
  // The ask as it stands is read only when the answer needs it: a state that says whether the ask has a form goes straight to the answer, which refuses an ask no longer pending itself.
  let ask: AskInfo | { hasForm: boolean } | undefined;
  if (!accepted || state.form === undefined) {
    // Replayed, or answered elsewhere first (first answer wins): the ask is no longer pending.
    const view = await run.view();
    const pending = view?.pending.find((entry): entry is AskInfo => entry.kind === 'ask' && entry.ask_id === state.ask);
    if (view === null || pending === undefined) throw invalidState();
    // Declined or cancelled: nothing is answered, the ask stays pending for the inbox.
    if (response.kind !== 'elicit' || response.action !== 'accept') {
      if (response.kind === 'elicit') return call.shape(view, { declined: state.ask });
      return call.shape(view);
    }
    ask = pending;
  } else {
    ask = { hasForm: state.form };
  }
  const answer = answerOf(ask, response.kind === 'elicit' ? response.content : undefined);
  if (!answer.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, answer.message);
  const stop = call.follow?.(state.run);
  let outcome: Awaited<ReturnType<typeof run.answer>>;
  try {
    outcome = await run.answer(state.ask, answer.answer, call.answeredBy, { waitMs: CALL_WAIT_MS });
  } catch (error) {
    await stop?.(null);
    throw error;
  }
  await stop?.(outcome.ok ? outcome.view : null);
  // The same state and answer again (replayed): the ask was answered already, by its first use.
  if (outcome.ok && !outcome.repeated) return call.shape(outcome.view);
  if (outcome.ok) throw invalidState();
  if (outcome.reason === 'not-a-choice') throw new ProtocolError(ProtocolErrorCode.InvalidParams, outcome.message, { choices: outcome.choices ?? [] });
  if (outcome.reason === 'not-a-fit')
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, outcome.message, outcome.field !== undefined ? { field: outcome.field } : {});
  // Taken (answered elsewhere first, or this state replayed), expired, closed, or its run ended.
  throw invalidState();
}
