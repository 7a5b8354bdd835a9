/**
 * The wait ledger's store in the run object's storage (run-state.ts), the Worker's part of
 * the one wait lifecycle (src/host/waits/wait-ledger.ts): asks as `ask:{ask_id}` records
 * (pending, answered, closed with a reason) and tool calls as `call:{call_id}` records
 * (sending, waiting, done, expired, closed), the layouts runs already stored keep, so a run
 * suspended by an earlier version resumes as it was. Each store maps its kind's layout to
 * the ledger's states and back (a call's as the memory ledger does, call-waits.ts), and
 * appends the kind's event with each change the stream shows.
 */
import { callWait, endedCall } from '../../host/waits/call-waits.ts';
import { WAIT_KINDS, type AskAnswer, type CallResult } from '../../host/waits/wait-kinds.ts';
import { WaitLedger, type EndCause, type Wait, type WaitEnd, type WaitState, type WaitStore } from '../../host/waits/wait-ledger.ts';
import type { RunState } from '../run-object/run-state.ts';
import type { AskRecord } from '../run-object/run-view.ts';

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
      this.state.putCall(endedCall(record, end, now));
      // A result the service gave at once is in the journal's tool result; one posted later is news.
      if (end.kind === 'done' && cause === 'posted') {
        this.state.appendEvent({ type: 'tool_result_received', task: record.chain, call_id: id, tool: record.tool, failed: !('output' in end.result) });
      }
      if (end.kind === 'expired') this.state.appendEvent({ type: 'tool_call_expired', task: record.chain, call_id: id, tool: record.tool });
    });
  }
}

/** The ledgers of a run's asks and of its calls, over its storage. */
export function storedLedgers(state: RunState): { asks: WaitLedger<AskAnswer>; calls: WaitLedger<CallResult> } {
  return { asks: new WaitLedger(new StoredAsks(state), WAIT_KINDS.ask), calls: new WaitLedger(new StoredCalls(state), WAIT_KINDS.call) };
}
