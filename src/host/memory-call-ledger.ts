/**
 * A call ledger held in memory, for a run that lives as long as its process: `runvil run`
 * (results arrive at its loopback listener, callback-listener.ts) and the fixture Host
 * (results arrive from the test file). A deadline is a timer; `deliver` takes a result as
 * the callback route does: once, the same again accepted, a different one refused.
 */
import { newCallRecord, sameResult, type CallEnd, type CallLedger, type CallOpening, type CallRecord, type ToolResult } from './tool-calls.ts';

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

/** Calls kept in memory. */
export class MemoryCallLedger implements CallLedger {
  private readonly records = new Map<string, CallRecord>();
  private readonly waiters = new Map<string, (end: CallEnd) => void>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(private readonly options: MemoryCallLedgerOptions) {}

  open(call: CallOpening): CallRecord {
    const known = this.records.get(call.callId);
    if (known) return known;
    const record = newCallRecord(call, (this.options.clock ?? Date.now)(), this.records.size + 1);
    this.records.set(call.callId, record);
    return record;
  }

  callback(callId: string): Promise<{ url: string; token: string }> {
    return this.options.callback(callId);
  }

  markWaiting(callId: string): void {
    const record = this.records.get(callId);
    if (record?.state !== 'sending') return;
    record.state = 'waiting';
    const now = (this.options.clock ?? Date.now)();
    const deadline = Date.parse(record.deadline);
    const delay = this.options.delay?.(deadline, now) ?? Math.max(0, deadline - now);
    this.timers.set(
      callId,
      setTimeout(() => this.end(callId, 'expired', { kind: 'expired' }), delay),
    );
  }

  settle(callId: string, result: ToolResult): void {
    const record = this.records.get(callId);
    if (!record || record.state === 'done') return;
    this.end(callId, 'done', { kind: 'result', result });
  }

  wait(callId: string): Promise<CallEnd> {
    const record = this.records.get(callId);
    const ended = record && endOf(record);
    if (ended) return Promise.resolve(ended);
    return new Promise((resolve) => this.waiters.set(callId, resolve));
  }

  /** A result posted for a call, as the callback route takes it. */
  deliver(callId: string, result: ToolResult): Delivery {
    const record = this.records.get(callId);
    if (!record) return { ok: false, status: 404, message: `this run has no tool call ${JSON.stringify(callId)}` };
    if (record.state === 'done') {
      if (record.result && sameResult(record.result, result)) return { ok: true };
      return {
        ok: false,
        status: 409,
        message: `tool call ${callId} already has a different result (received at ${record.received_at}); a result is taken once`,
      };
    }
    if (record.state === 'expired')
      return { ok: false, status: 409, message: `tool call ${callId} is no longer waiting: its deadline passed (${record.deadline})` };
    if (record.state === 'closed') return { ok: false, status: 409, message: `tool call ${callId} is no longer waiting: the run no longer needs its result` };
    this.end(callId, 'done', { kind: 'result', result });
    return { ok: true };
  }

  /** Closes every open call (the run ended): nobody waits for their results now. */
  closeAll(): void {
    for (const record of this.records.values())
      if (record.state === 'sending' || record.state === 'waiting') this.end(record.call_id, 'closed', { kind: 'closed' });
  }

  /** The calls that wait on their results now. */
  waiting(): CallRecord[] {
    return [...this.records.values()].filter((record) => record.state === 'waiting');
  }

  private end(callId: string, state: 'done' | 'expired' | 'closed', end: CallEnd): void {
    const record = this.records.get(callId);
    if (!record) return;
    record.state = state;
    if (end.kind === 'result') {
      record.result = end.result;
      record.received_at = new Date((this.options.clock ?? Date.now)()).toISOString();
    }
    const timer = this.timers.get(callId);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(callId);
    const resolve = this.waiters.get(callId);
    this.waiters.delete(callId);
    resolve?.(end);
  }
}

/** How a call whose record says it has ended ended, or null while it is open. */
export function endOf(record: CallRecord): CallEnd | null {
  switch (record.state) {
    case 'done':
      return { kind: 'result', result: record.result ?? { error: `${record.tool}: the result was lost` } };
    case 'expired':
      return { kind: 'expired' };
    case 'closed':
      return { kind: 'closed' };
    default:
      return null;
  }
}
