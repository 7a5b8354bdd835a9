/**
 * A tool call's record (tool-calls.ts's CallRecord, the layout the Worker stores as
 * `call:{call_id}` and `runvil run` keeps in memory) as a wait of the ledger, and a wait's end
 * written back into it: the one mapping both stores of calls use, so a call ends the same
 * way wherever it is kept.
 */
import type { CallRecord, CallState } from '../tool-calls.ts';
import type { CallResult } from './wait-kinds.ts';
import type { Wait, WaitEnd, WaitState } from './wait-ledger.ts';

const CALL_STATES: { [state in CallState]: WaitState } = {
  sending: 'opening',
  waiting: 'pending',
  done: 'done',
  expired: 'expired',
  closed: 'closed',
};

/** A call record as a wait: sending is opening, waiting is pending. */
export function callWait(record: CallRecord): Wait<CallResult> {
  return {
    id: record.call_id,
    task: record.chain,
    state: CALL_STATES[record.state],
    deadline: record.deadline,
    ...(record.state === 'done' ? { result: record.result ?? { error: `${record.tool}: the result was lost` } } : {}),
    ...(record.received_at !== undefined ? { doneAt: record.received_at } : {}),
  };
}

/** Call record `record` as wait end `end` at `now` (epoch ms) leaves it. */
export function endedCall(record: CallRecord, end: WaitEnd<CallResult>, now: number): CallRecord {
  if (end.kind === 'done') return { ...record, state: 'done', result: end.result, received_at: new Date(now).toISOString() };
  return { ...record, state: end.kind };
}
