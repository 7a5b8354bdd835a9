/**
 * The run object's call ledger (src/host/tool-calls.ts): each call to a tool that may answer
 * later is a record in the run's storage (`call:{call_id}`), written before the call goes
 * out, so the callback route finds it whether or not the run is in memory. The run object
 * takes results (`takeResult`) and passes deadlines (`expireCalls`) on the stored records;
 * a live run's broker then hands the end to the chain that waits (`wake`). A run evicted
 * while it waits is replayed when the result comes, and its replay finds the record ended.
 *
 * Only its chain waits: other tasks and arms go on, and the run counts as suspended once
 * every effect in flight waits on an ask or on a call in state `waiting` (live-run.ts).
 */
import { endOf } from '../../host/memory-call-ledger.ts';
import { newCallRecord, sameResult, type CallEnd, type CallLedger, type CallOpening, type CallRecord, type ToolResult } from '../../host/tool-calls.ts';
import type { RunState } from '../run-object/run-state.ts';
import type { PendingToolCall } from '../run-object/run-view.ts';
import type { Refusal } from '../run-object/run-object-api.ts';

/** A call as `pending` lists it. */
export const pendingCall = (record: CallRecord): PendingToolCall => ({
  kind: 'tool',
  call_id: record.call_id,
  tool: record.tool,
  called_at: record.called_at,
  deadline: record.deadline,
});

/** True when the call `record` was made by `task` or by a task it started. */
const calledWithin = (record: CallRecord, task: string): boolean => record.chain === task || record.chain.startsWith(`${task}.`);

/** The calls of one live run. */
export class CallBroker implements CallLedger {
  private readonly waiters = new Map<string, (end: CallEnd) => void>();

  constructor(
    private readonly state: RunState,
    /** The callback URL and token of a call (the Worker's to derive). */
    private readonly callbacks: (callId: string) => Promise<{ url: string; token: string }>,
    /** Called when the set of waiting calls changes (the run may have become suspended). */
    private readonly changed: () => void,
    private readonly clock: () => number = Date.now,
  ) {}

  open(call: CallOpening): CallRecord {
    const known = this.state.call(call.callId);
    if (known) return known;
    const record = newCallRecord(call, this.clock(), this.state.calls().length + 1);
    this.state.putCall(record);
    return record;
  }

  callback(callId: string): Promise<{ url: string; token: string }> {
    return this.callbacks(callId);
  }

  markWaiting(callId: string): void {
    const record = this.state.call(callId);
    if (record?.state !== 'sending') return;
    this.state.atomically(() => {
      this.state.putCall({ ...record, state: 'waiting' });
      this.state.appendEvent({ type: 'tool_call_pending', task: record.chain, call_id: callId, tool: record.tool, deadline: record.deadline });
    });
    this.changed();
  }

  settle(callId: string, result: ToolResult): void {
    const record = this.state.call(callId);
    if (!record || endOf(record)) return;
    this.state.putCall({ ...record, state: 'done', result, received_at: new Date(this.clock()).toISOString() });
    this.wake(callId);
  }

  wait(callId: string): Promise<CallEnd> {
    const record = this.state.call(callId);
    const ended = record && endOf(record);
    if (ended) return Promise.resolve(ended);
    const end = new Promise<CallEnd>((resolve) => this.waiters.set(callId, resolve));
    this.changed();
    return end;
  }

  /** Calls this run waits on now (a call still being sent is in flight, not waiting). */
  get waitingCount(): number {
    let count = 0;
    for (const callId of this.waiters.keys()) if (this.state.call(callId)?.state === 'waiting') count++;
    return count;
  }

  /** Hands the stored end of call `callId` to the chain that waits on it, if one does. */
  wake(callId: string): void {
    const resolve = this.waiters.get(callId);
    const record = this.state.call(callId);
    const ended = record && endOf(record);
    if (!resolve || !ended) return;
    this.waiters.delete(callId);
    resolve(ended);
    this.changed();
  }

  /** Closes the open calls of a cancelled task and of the tasks it started. */
  closeCallsOf(task: string): void {
    for (const record of this.state.calls()) {
      if (endOf(record) || !calledWithin(record, task)) continue;
      this.state.putCall({ ...record, state: 'closed' });
      this.wake(record.call_id);
    }
  }
}

/** What a posted result gets: taken (or the same again), or refused with the status the route answers. */
export type TakenResult = { ok: true; taken: boolean } | Refusal;

/** Takes a result posted for call `callId` into its record (the run has not ended). */
export function takeResult(state: RunState, callId: string, result: ToolResult, now: number): TakenResult {
  const record = state.call(callId);
  if (!record) return { ok: false, reason: 'no-call', status: 404, message: `run ${state.meta()!.run_id} has no tool call ${JSON.stringify(callId)}` };
  switch (record.state) {
    case 'done':
      // A retry of the result taken (its response was lost) is no error; another result is.
      if (record.result && sameResult(record.result, result)) return { ok: true, taken: false };
      return {
        ok: false,
        reason: 'taken',
        status: 409,
        message: `tool call ${callId} already has a different result (received at ${record.received_at}); a result is taken once`,
      };
    case 'expired':
      return {
        ok: false,
        reason: 'expired',
        status: 409,
        message: `tool call ${callId} is no longer waiting: its deadline passed at ${record.deadline}, so the result is stale`,
      };
    case 'closed':
      return {
        ok: false,
        reason: 'closed',
        status: 409,
        message: `tool call ${callId} is no longer waiting: the task that made it was cancelled, so the result is stale`,
      };
  }
  state.atomically(() => {
    state.putCall({ ...record, state: 'done', result, received_at: new Date(now).toISOString() });
    state.appendEvent({ type: 'tool_result_received', task: record.chain, call_id: callId, tool: record.tool, failed: !('output' in result) });
  });
  return { ok: true, taken: true };
}

/** Ends the waiting calls whose deadline has passed at `now`; answers their ids. */
export function expireCalls(state: RunState, now: number): string[] {
  const expired: string[] = [];
  for (const record of state.calls()) {
    if (record.state !== 'waiting' || Date.parse(record.deadline) > now) continue;
    state.atomically(() => {
      state.putCall({ ...record, state: 'expired' });
      state.appendEvent({ type: 'tool_call_expired', task: record.chain, call_id: record.call_id, tool: record.tool });
    });
    expired.push(record.call_id);
  }
  return expired;
}

/** The earliest deadline of a waiting call (ms since the epoch), or null when none waits. */
export function nextCallDeadline(state: RunState): number | null {
  let next: number | null = null;
  for (const record of state.calls()) {
    if (record.state !== 'waiting') continue;
    const at = Date.parse(record.deadline);
    if (next === null || at < next) next = at;
  }
  return next;
}

/** Closes every open call of an ended run. */
export function closeOpenCalls(state: RunState): void {
  for (const record of state.calls()) if (!endOf(record)) state.putCall({ ...record, state: 'closed' });
}
