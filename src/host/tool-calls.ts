/**
 * Tool calls whose result comes later (DESIGN.md Part 2, "HTTP tool services"): a service
 * answers 202 and posts the result to the call's callback URL, minutes or hours after.
 * A call ledger keeps each call's record where the callback can find it (the run object's
 * storage in the Worker, memory on the command line), so a call waits as durably as the
 * ledger keeps it: a replay that reaches a call finds its record and waits again, or takes
 * the result that came while nothing ran, without sending the call again.
 */
import type { Json } from '../json/json.ts';
import { canonicalJson } from '../json/canonical-json.ts';
import { hexOf, sha256 } from '../json/digest.ts';

/**
 * What a service delivers for a call: its output, or its model-safe failure text; or, as
 * `oversized`, an answer past the cap on one (tool-output-cap.ts), which the call was not
 * read whole for and which ends the run with `Limit`.
 */
export type ToolResult = { output: Json } | { error: string } | { oversized: true };

/**
 * Where a call stands: `sending` (sent, no answer yet: a replay sends it again, under the
 * same call id), `waiting` (the service answered 202), `done` (its result is in), `expired`
 * (its deadline passed first), `closed` (its task was cancelled, or the run ended).
 */
export type CallState = 'sending' | 'waiting' | 'done' | 'expired' | 'closed';

/** One call to a tool that may answer later, as its ledger keeps it. */
export interface CallRecord {
  call_id: string;
  /** The tool id, such as `deploy/start`. */
  tool: string;
  /** The chain that called: `0`, a task such as `0.1`, an arm such as `0.f0.2`. */
  chain: string;
  state: CallState;
  called_at: string;
  deadline: string;
  timeout_seconds: number;
  /** The result, once `done`. */
  result?: ToolResult;
  received_at?: string;
  /** Counts the run's calls from 1, in the order they were made. */
  order: number;
  /** A call its server turned into a task, followed by polling it (remote/mcp/mcp-tasks.ts); absent for a call whose result is posted. */
  task?: FollowedTask;
}

/**
 * A server's task that a call waits on, as the ledger keeps it: what the next poll needs
 * (the Pack and the task id), when it is due, and what the polls so far found. The Worker
 * polls it on the run object's alarm, `runvil run` on a timer.
 */
export interface FollowedTask {
  /** The Pack whose server holds the task (its configured name, such as `acme/reports`). */
  pack: string;
  task_id: string;
  /** The server's suggested interval between polls, in ms, as last heard (bounded where it is read). */
  poll_ms: number | null;
  /** How many polls found the task still under way. */
  polls: number;
  /** When the next poll is due (epoch ms). */
  next_poll_at: number;
  /** The server's input requests the last poll found (its `inputRequests`, by key): the call asks them before it waits again. */
  input?: Json;
  /** How many asks the task's input requests made so far: the next one's part within the call's effect. */
  asked?: number;
  /** True once `tasks/cancel` was sent for a task whose call was closed. */
  cancel_sent?: true;
}

/** How a wait ends: the result, or why none will come. */
export type CallEnd = { kind: 'result'; result: ToolResult } | { kind: 'expired' } | { kind: 'closed' };

/** A new call, as the Pack opens it. */
export interface CallOpening {
  callId: string;
  tool: string;
  chain: string;
  timeoutSeconds: number;
}

/** The record of a call opened at `now` (epoch ms), the `order`-th of its run, before it is sent. */
export function newCallRecord(call: CallOpening, now: number, order: number): CallRecord {
  return {
    call_id: call.callId,
    tool: call.tool,
    chain: call.chain,
    state: 'sending',
    called_at: new Date(now).toISOString(),
    deadline: new Date(now + call.timeoutSeconds * 1000).toISOString(),
    timeout_seconds: call.timeoutSeconds,
    order,
  };
}

/** Where a run's calls that may answer later are kept and their results arrive. */
export interface CallLedger {
  /** The call's record: the stored one on a replay, else a new one in state `sending`. */
  open(call: CallOpening): CallRecord;
  /** Where and with what token the service posts the call's result. */
  callback(callId: string): Promise<{ url: string; token: string }>;
  /** The service answered 202 (or, with `task`, its server made the call a task to follow): the call now waits on its result. */
  markWaiting(callId: string, task?: FollowedTask): void;
  /** The call's record, if it was opened (a replay finds a call that waits). */
  find?(callId: string): CallRecord | undefined;
  /** Keeps what a poll of a call's task found (its next poll, its input requests), for a call still waiting. */
  updateTask?(callId: string, task: FollowedTask): void;
  /** True when the ledger's host polls the tasks of waiting calls itself (the Worker's alarm); else the call polls in its own process. */
  readonly pollsTasks?: boolean;
  /** Settles when something outside the call (a poll) wants the waiting call to look at its record again: its task asks for input. */
  nudged?(callId: string): Promise<void>;
  /** The service answered at once (or failed for good): the call is done with `result`. */
  settle(callId: string, result: ToolResult): void;
  /** Settles when the call ends: its result (maybe one in already), its deadline, or its close. */
  wait(callId: string): Promise<CallEnd>;
}

/** The model-safe failure of a call whose result did not come by its deadline. */
export function noResultWithin(tool: string, timeoutSeconds: number): string {
  return `${tool}: no result within ${timeoutSeconds} s`;
}

/** The model-safe failure of a call abandoned because its task was cancelled or its run ended. */
export function callClosed(tool: string): string {
  return `${tool}: the call was abandoned before its result came`;
}

/** True when two results are the same (the same output, or the same error text), whatever their key order. */
export function sameResult(a: ToolResult, b: ToolResult): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * The call id of the effect (chain, seq) of run `runId`: the same on every replay, so a
 * service can tell a repeat from a new call; distinct across runs, so one service's calls
 * from many runs never share an id. `tc_` and 32 hex digits of SHA-256.
 */
export async function callIdOf(runId: string, effect: { chain: string; seq: number }): Promise<string> {
  const digest = await sha256(`runvil tool call v1\n${runId}\n${effect.chain}-${effect.seq}`);
  return `tc_${hexOf(digest.subarray(0, 16))}`;
}

/** True for a text that may be a call id (checked before anything looks it up). */
export const isCallId = (text: string): boolean => /^tc_[0-9a-f]{32}$/.test(text);

/** The message of a body that is neither `{"output": …}` nor `{"error": "…"}`. */
export const NOT_A_RESULT =
  'a tool result is {"output": …} (the tool\'s output: text for a plain tool, any JSON for a structured one) or {"error": "…"} (its failure), exactly one of them';

/** The result a callback body (a JSON object, parsed) delivers, or what is wrong with it. */
export function toolResultOf(body: { [key: string]: Json }): { ok: true; result: ToolResult } | { ok: false; message: string; field?: string } {
  for (const key of Object.keys(body)) {
    if (key !== 'output' && key !== 'error') {
      const shown = key.length > 100 ? `${key.slice(0, 100)}...` : key;
      return { ok: false, message: `the request body has an unknown field \`${shown}\`; it takes \`output\`, \`error\``, field: shown };
    }
  }
  const hasOutput = Object.hasOwn(body, 'output');
  if (hasOutput === Object.hasOwn(body, 'error')) return { ok: false, message: NOT_A_RESULT };
  if (hasOutput) return { ok: true, result: { output: body.output! } };
  if (typeof body.error !== 'string' || body.error.trim() === '') {
    return { ok: false, message: "`error` must be a non-empty string: the tool's failure, as the model will read it", field: 'error' };
  }
  return { ok: true, result: { error: body.error } };
}
