/**
 * The rounds of a tool call whose server asks questions before it answers (an MCP server of
 * the 2026-07-28 protocol answers `input_required`: its input requests and an opaque request
 * state the retry must carry). A call's rounds are kept beside its asks, by the call's effect,
 * so that a run evicted while the operator decides comes back to the round it was on: the
 * retry goes with the kept state and the asks' answers, and the call is never sent again
 * from its start (the server has done its part of the rounds before). Kept in the run
 * object's storage in the Worker, in memory for a run of the command line.
 */
import type { Json } from '../json/json.ts';

/** Where one tool call stands in its rounds. */
export interface CallRoundsRecord {
  /** How many times the server answered with questions so far. */
  rounds: number;
  /** How many asks the rounds before the last one made: the first ask of the last round is part `asked` of the call's effect. */
  asked: number;
  /** The last round the server answered: its request state (absent: none) and its input requests, as the server sent them. */
  last?: { request_state?: string; input_requests: Json };
  /**
   * True once a question of a server of the older protocol (2025-11-25's elicitation, a
   * request on the call's open connection) was put to the operator: that question lives only
   * as long as the connection, so a later execution of the run cannot answer it.
   */
  held?: true;
}

/** A run's record of its tool calls' rounds, by the call's effect (chain, seq). */
export interface CallRounds {
  get(effect: { chain: string; seq: number }): CallRoundsRecord | undefined;
  /** Keeps the record; it is durable before the asks the round makes are answered. */
  put(effect: { chain: string; seq: number }, record: CallRoundsRecord): void;
}

/** The key of an effect's rounds: its ask id (`<chain>-<seq>`). */
export const roundsKey = (effect: { chain: string; seq: number }): string => `${effect.chain}-${effect.seq}`;

/** Rounds kept in memory, for one run of one process. */
export class MemoryCallRounds implements CallRounds {
  private readonly records = new Map<string, CallRoundsRecord>();

  get(effect: { chain: string; seq: number }): CallRoundsRecord | undefined {
    return this.records.get(roundsKey(effect));
  }

  put(effect: { chain: string; seq: number }, record: CallRoundsRecord): void {
    this.records.set(roundsKey(effect), record);
  }
}
