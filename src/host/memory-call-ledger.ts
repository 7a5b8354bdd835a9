/**
 * A call ledger held in memory, for a run that lives as long as its process: `runvil run`
 * (results arrive at its loopback listener, callback-listener.ts) and the fixture Host
 * (results arrive from the test file). A thin face over the one wait lifecycle
 * (waits/wait-ledger.ts), as the Worker's call broker is over the run object's storage:
 * the ledger judges a delivered result (once, the same again accepted, a different one
 * refused), expires and closes; this face keeps the records in a Map and a deadline as a
 * timer, and hands each end to the chain that waits.
 */
import { newCallRecord, type CallEnd, type CallLedger, type CallOpening, type CallRecord, type ToolResult } from './tool-calls.ts';
import { callWait, endedCall } from './waits/call-waits.ts';
import { WAIT_KINDS, type CallResult } from './waits/wait-kinds.ts';
import { WaitLedger, type EndCause, type Wait, type WaitEnd, type WaitKindPolicy, type WaitStore } from './waits/wait-ledger.ts';
import { Waiters } from './waits/waiters.ts';

/** What a delivered result gets: accepted, or refused with the status the callback route answers. */
export type Delivery = { ok: true } | { ok: false; status: 404 | 409; message: string };

/** What a memory ledger is built with. */
export interface MemoryCallLedgerOptions {
  /** The callback URL and token of a call. */
  callback: (callId: string) => Promise<{ url: string; token: string }>;
  clock?: () => number;
  /** Milliseconds until a deadline fires; the fixture Host fires every deadline at once (its clock never moves). */
  delay?: (deadlineMs: number, now: number) => number;
}

/**
 * A call's lifecycle in `runvil run`'s words, which its listener has always answered: a
 * process's run is one run (no run id to name), and it ends by closing its calls, so a
 * closed call is one the run no longer needs.
 */
const COMMAND_LINE_CALLS: WaitKindPolicy<CallResult> = {
  ...WAIT_KINDS.call,
  words: {
    ...WAIT_KINDS.call.words,
    missing: (_runId, id) => `this run has no tool call ${JSON.stringify(id)}`,
    expired: (wait) => `tool call ${wait.id} is no longer waiting: its deadline passed (${wait.deadline})`,
    closed: (wait) => `tool call ${wait.id} is no longer waiting: the run no longer needs its result`,
  },
};

/** A memory ledger's run ends by closing its calls (closeAll), so a result it judges finds the run going on, or the call closed. */
const RUN_GOING = { status: 'running', ended: false };

/** Call records in a Map, as a wait store. */
class MemoryCalls implements WaitStore<CallResult> {
  readonly records = new Map<string, CallRecord>();

  runId(): string {
    return 'memory';
  }

  get(id: string): Wait<CallResult> | undefined {
    const record = this.records.get(id);
    return record && callWait(record);
  }

  list(): Wait<CallResult>[] {
    return [...this.records.values()].map(callWait);
  }

  end(id: string, end: WaitEnd<CallResult>, _cause: EndCause, now: number): void {
    const record = this.records.get(id);
    if (record) this.records.set(id, endedCall(record, end, now));
  }
}

/** Calls kept in memory. */
export class MemoryCallLedger implements CallLedger {
  private readonly store = new MemoryCalls();
  private readonly ledger = new WaitLedger(this.store, COMMAND_LINE_CALLS);
  private readonly waiters = new Waiters(this.ledger, () => {});
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(private readonly options: MemoryCallLedgerOptions) {}

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  open(call: CallOpening): CallRecord {
    const known = this.store.records.get(call.callId);
    if (known) return known;
    const record = newCallRecord(call, this.now(), this.store.records.size + 1);
    this.store.records.set(call.callId, record);
    return record;
  }

  callback(callId: string): Promise<{ url: string; token: string }> {
    return this.options.callback(callId);
  }

  markWaiting(callId: string): void {
    const record = this.store.records.get(callId);
    if (record?.state !== 'sending') return;
    this.store.records.set(callId, { ...record, state: 'waiting' });
    const now = this.now();
    const deadline = Date.parse(record.deadline);
    const delay = this.options.delay?.(deadline, now) ?? Math.max(0, deadline - now);
    this.timers.set(
      callId,
      setTimeout(() => {
        if (this.ledger.expireOne(callId, this.now())) this.ended(callId);
      }, delay),
    );
  }

  settle(callId: string, result: ToolResult): void {
    this.ledger.settle(callId, result, this.now());
    this.ended(callId);
  }

  wait(callId: string): Promise<CallEnd> {
    return this.waiters.wait(callId).then((end) => (end.kind === 'done' ? { kind: 'result', result: end.result } : end));
  }

  /** A result posted for a call, as the callback route takes it. */
  deliver(callId: string, result: ToolResult): Delivery {
    const taking = this.ledger.take(callId, result, RUN_GOING, this.now());
    if (taking === 'taken') this.ended(callId);
    if (taking === 'taken' || taking === 'retry') return { ok: true };
    // A call's refusals are 404 (no such call) or 409 (stale); 400 is an ask's alone (not a choice).
    return { ok: false, status: taking.status === 404 ? 404 : 409, message: taking.message };
  }

  /** Closes every open call (the run ended): nobody waits for their results now. */
  closeAll(): void {
    for (const callId of this.ledger.closeAll(this.now())) this.ended(callId);
  }

  /** The calls that wait on their results now. */
  waiting(): CallRecord[] {
    return [...this.store.records.values()].filter((record) => record.state === 'waiting');
  }

  /** Call `callId` has ended: its deadline's timer is no longer needed, and the chain that waits is handed the end. */
  private ended(callId: string): void {
    clearTimeout(this.timers.get(callId));
    this.timers.delete(callId);
    this.waiters.wake(callId);
  }
}
