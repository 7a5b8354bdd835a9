/**
 * The wait ledger's store in the run object's storage (run-state.ts): asks as `ask:{ask_id}`
 * records (pending, answered, closed with a reason) and tool calls as `call:{call_id}`
 * records (sending, waiting, done, expired, closed), the layouts runs already stored keep,
 * so a run suspended by an earlier version resumes as it was. Each store maps its kind's
 * layout to the ledger's states (wait-ledger.ts) and back, and appends the kind's event with
 * each change the stream shows.
 */
import type { CallRecord } from '../../host/tool-calls.ts';
import type { RunState } from '../run-object/run-state.ts';
import type { AskRecord } from '../run-object/run-view.ts';
import {
  WAIT_KINDS,
  WaitLedger,
  type AskAnswer,
  type CallResult,
  type EndCause,
  type Wait,
  type WaitEnd,
  type WaitState,
  type WaitStore,
} from './wait-ledger.ts';

/** The chain that made the ask `askId` (chain ids hold no `-`). */
export const chainOfAsk = (askId: string): string => {
  const dash = askId.lastIndexOf('-');
  return dash < 0 ? '0' : askId.slice(0, dash);
};

/** An ask record as a wait: answered is done; closed is expired when its deadline closed it. */
export function askWait(record: AskRecord): Wait<AskAnswer> {
  const state: WaitState =
    record.state === 'answered' ? 'done' : record.state === 'pending' ? 'pending' : record.closed_reason === 'expired' ? 'expired' : 'closed';
  return {
    id: record.ask_id,
    task: chainOfAsk(record.ask_id),
    state,
    deadline: record.expires_at ?? null,
    ...(record.state === 'answered' ? { result: { text: record.answer ?? '', by: record.answered_by ?? null } } : {}),
    ...(record.answered_at !== undefined ? { doneAt: record.answered_at } : {}),
    choices: record.choices ?? null,
  };
}

const CALL_STATES: { [state in CallRecord['state']]: WaitState } = {
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

/** The run's asks as a wait store. */
export class StoredAsks implements WaitStore<AskAnswer> {
  constructor(private readonly state: RunState) {}

  runId(): string {
    return this.state.meta()!.run_id;
  }

  get(id: string): Wait<AskAnswer> | undefined {
    const record = this.state.ask(id);
    return record && askWait(record);
  }

  list(): Wait<AskAnswer>[] {
    return this.state.asks().map(askWait);
  }

  end(id: string, end: WaitEnd<AskAnswer>, _cause: EndCause, now: number): void {
    const record = this.state.ask(id);
    if (!record) return;
    const at = new Date(now).toISOString();
    const task = chainOfAsk(id);
    this.state.atomically(() => {
      switch (end.kind) {
        case 'done':
          this.state.putAsk({
            ...record,
            state: 'answered',
            answer: end.result.text,
            answered_at: at,
            ...(end.result.by !== null ? { answered_by: end.result.by } : {}),
          });
          this.state.appendEvent({ type: 'ask_answered', task, ask_id: id, answered_by: end.result.by });
          break;
        case 'expired':
          this.state.putAsk({ ...record, state: 'closed', closed_reason: 'expired', closed_at: at });
          this.state.appendEvent({ type: 'ask_expired', task, ask_id: id });
          break;
        case 'closed':
          // The stored reason of a close by the run's end is `cancelled` too (run-view.ts).
          this.state.putAsk({ ...record, state: 'closed', closed_reason: 'cancelled', closed_at: at });
          break;
      }
    });
  }
}

/** The run's tool calls that may answer later as a wait store. */
export class StoredCalls implements WaitStore<CallResult> {
  constructor(private readonly state: RunState) {}

  runId(): string {
    return this.state.meta()!.run_id;
  }

  get(id: string): Wait<CallResult> | undefined {
    const record = this.state.call(id);
    return record && callWait(record);
  }

  list(): Wait<CallResult>[] {
    return this.state.calls().map(callWait);
  }

  end(id: string, end: WaitEnd<CallResult>, cause: EndCause, now: number): void {
    const record = this.state.call(id);
    if (!record) return;
    this.state.atomically(() => {
      switch (end.kind) {
        case 'done':
          this.state.putCall({ ...record, state: 'done', result: end.result, received_at: new Date(now).toISOString() });
          // A result the service gave at once is in the journal's tool result; one posted later is news.
          if (cause === 'posted') {
            this.state.appendEvent({ type: 'tool_result_received', task: record.chain, call_id: id, tool: record.tool, failed: !('output' in end.result) });
          }
          break;
        case 'expired':
          this.state.putCall({ ...record, state: 'expired' });
          this.state.appendEvent({ type: 'tool_call_expired', task: record.chain, call_id: id, tool: record.tool });
          break;
        case 'closed':
          this.state.putCall({ ...record, state: 'closed' });
          break;
      }
    });
  }
}

/** The ledgers of a run's asks and of its calls, over its storage. */
export function storedLedgers(state: RunState): { asks: WaitLedger<AskAnswer>; calls: WaitLedger<CallResult> } {
  return { asks: new WaitLedger(new StoredAsks(state), WAIT_KINDS.ask), calls: new WaitLedger(new StoredCalls(state), WAIT_KINDS.call) };
}
