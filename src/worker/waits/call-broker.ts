/**
 * The run object's call ledger (src/host/tool-calls.ts), the tool call face of the wait
 * ledger (src/host/waits/wait-ledger.ts; `runvil run`'s is src/host/memory-call-ledger.ts):
 * each call to a tool that may answer later is a record in the run's storage
 * (`call:{call_id}`), written before the call goes out, so the callback route finds it
 * whether or not the run is in memory. The wait ledger takes results and passes
 * deadlines on the stored records; a live run's broker then hands the end to the chain that
 * waits (`wake`). A run evicted while it waits is replayed when the result comes, and its
 * replay finds the record ended.
 *
 * Only its chain waits: other tasks and arms go on, and the run counts as suspended once
 * every effect in flight waits on an ask or on a call in state `waiting` (live-run.ts).
 */
import { newCallRecord, type CallEnd, type CallLedger, type CallOpening, type CallRecord, type FollowedTask, type ToolResult } from '../../host/tool-calls.ts';
import type { RunState } from '../run-object/run-state.ts';
import type { PendingToolCall } from '../run-object/run-view.ts';
import { StoredCalls } from './stored-waits.ts';
import { WAIT_KINDS, type CallResult } from '../../host/waits/wait-kinds.ts';
import { WaitLedger, type WaitEnd } from '../../host/waits/wait-ledger.ts';
import { Waiters } from '../../host/waits/waiters.ts';

/** A call as `pending` lists it. */
export const pendingCall = (record: CallRecord): PendingToolCall => ({
  kind: 'tool',
  call_id: record.call_id,
  tool: record.tool,
  called_at: record.called_at,
  deadline: record.deadline,
});

/** What the calling chain gets from a call's end (the Pack words an expired or closed one, tool-calls.ts). */
const callEnd = (end: WaitEnd<CallResult>): CallEnd => (end.kind === 'done' ? { kind: 'result', result: end.result } : end);

/** The calls of one live run. */
export class CallBroker implements CallLedger {
  readonly ledger: WaitLedger<CallResult>;
  private readonly waiters: Waiters<CallResult>;
  /** The run object's alarm polls the tasks of waiting calls (run-object/task-polls.ts). */
  readonly pollsTasks = true;
  /** Calls whose chain is to look at their record again (a poll found their task asking for input), by call id. */
  private readonly nudges = new Map<string, () => void>();

  constructor(
    private readonly state: RunState,
    /** The callback URL and token of a call (the Worker's to derive). */
    private readonly callbacks: (callId: string) => Promise<{ url: string; token: string }>,
    /** Called when the set of waiting calls changes (the run may have become suspended). */
    private readonly changed: () => void,
    private readonly clock: () => number = Date.now,
  ) {
    this.ledger = new WaitLedger(new StoredCalls(state), WAIT_KINDS.call);
    this.waiters = new Waiters(this.ledger, changed);
  }

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

  markWaiting(callId: string, task?: FollowedTask): void {
    const record = this.state.call(callId);
    if (record?.state !== 'sending') return;
    this.state.atomically(() => {
      this.state.putCall({ ...record, state: 'waiting', ...(task ? { task } : {}) });
      this.state.appendEvent({ type: 'tool_call_pending', task: record.chain, call_id: callId, tool: record.tool, deadline: record.deadline });
    });
    this.changed();
  }

  find(callId: string): CallRecord | undefined {
    return this.state.call(callId);
  }

  updateTask(callId: string, task: FollowedTask): void {
    const record = this.state.call(callId);
    if (record?.state === 'waiting') this.state.putCall({ ...record, task });
  }

  nudged(callId: string): Promise<void> {
    return new Promise((resolve) => this.nudges.set(callId, resolve));
  }

  /** Has the chain waiting on call `callId` look at its record again (its task asks for input). */
  nudge(callId: string): void {
    const resolve = this.nudges.get(callId);
    this.nudges.delete(callId);
    resolve?.();
  }

  settle(callId: string, result: ToolResult): void {
    this.ledger.settle(callId, result, this.clock());
    this.waiters.wake(callId);
  }

  async wait(callId: string): Promise<CallEnd> {
    return callEnd(await this.waiters.wait(callId));
  }

  /** Calls this run waits on now (a call still being sent is in flight, not waiting). */
  get waitingCount(): number {
    return this.waiters.count;
  }

  /** Hands the stored end of call `callId` to the chain that waits on it, if one does. */
  wake(callId: string): void {
    this.waiters.wake(callId);
  }

  /** Closes the open calls of a cancelled task and of the tasks it started. */
  closeCallsOf(task: string): void {
    for (const callId of this.ledger.closeWithin(task, this.clock())) this.waiters.wake(callId);
  }
}
