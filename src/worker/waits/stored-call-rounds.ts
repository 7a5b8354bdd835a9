/**
 * The run's tool calls' rounds (src/host/call-rounds.ts: an MCP server's `input_required`
 * request state and input requests) in the run object's storage, beside the asks they make:
 * a run evicted while an operator decides finds the round its call was on when the answer
 * brings it back, and sends the retry, not the call again.
 */
import { roundsKey, type CallRounds, type CallRoundsRecord } from '../../host/call-rounds.ts';
import type { RunState } from '../run-object/run-state.ts';

/** The rounds of one run's calls, over its state. */
export class StoredCallRounds implements CallRounds {
  constructor(private readonly state: RunState) {}

  get(effect: { chain: string; seq: number }): CallRoundsRecord | undefined {
    return this.state.callRounds(roundsKey(effect));
  }

  put(effect: { chain: string; seq: number }, record: CallRoundsRecord): void {
    this.state.putCallRounds(roundsKey(effect), record);
  }
}
