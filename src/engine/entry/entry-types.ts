/**
 * The names the entry files share: how an entry is made and how it ends, what the driver and
 * its rounds keep of an entry, and an effect's plan. Types only, so every entry file imports
 * them from here rather than from the module that happens to use them most.
 */
import type { Conversation } from '../conversation.ts';
import type { EffectAnswer, EffectRequest } from '../effects.ts';
import type { EntryClock } from '../entry-clock.ts';
import type { RunError } from '../errors.ts';
import type { LuaScalar } from '../lua/vm.ts';
import type { EntrySection } from '../run-context.ts';
import type { FusedRecords } from './protocol.ts';

/** How an entry is made: walked into, the H1 pass, entered with call, a task's or a fanout arm's section. */
export type EntryKind = 'walk' | 'h1' | 'call' | 'task' | 'arm';

/** The outcome of one entry. */
export type EntryOutcome =
  | { type: 'return'; text: string }
  | { type: 'fall' }
  | { type: 'jump'; target: string }
  | { type: 'error'; error: RunError; luaKind: string }
  | { type: 'stop'; error: RunError };

/** What an entry needs beyond the run: which section, how it was entered, its call arguments. */
export interface EntrySpec {
  kind: EntryKind;
  section: EntrySection;
  /** JSON text of a call's extra arguments or a task's input (a list), passed to the blocks as `...`. */
  callArgs?: string;
  /** JSON text of a fanout arm's item, bound to the global `item`. */
  item?: string;
  /** The chain the entry runs on: `0`, a task's id or an arm's id. */
  chain: string;
}

/** What an entry keeps between its model rounds. */
export interface EntryState {
  conversation: Conversation;
  /** The rendered tool list's wire names and tool ids, once the first round sent them. */
  renderedTools: Record<string, string>;
  /** The rendered tool list's JSON as the last loop round sent it (a round sends it only when it changed). */
  toolsText: string;
  /**
   * The texts of the records the last fused round's answer carried (its assistant record and
   * tool records): the next round names them (RoundYield.fusedRecords) rather than Lua
   * sending back the texts the driver made.
   */
  fusedRecords: FusedRecords;
  /** The entry's computing time against the host's limit (entry-clock.ts); null without one. */
  clock: EntryClock | null;
}

/** What the driver keeps of an entry: its rounds' state, and the effect plan waiting for the thread's 'kept' yield. */
export interface DriverState extends EntryState {
  waiting: Waiting | null;
}

/**
 * What a plan waits on: requests the Harness answers (through the journal). An optional
 * need is dropped, rather than waited for, when it cannot be answered at once: a round's
 * fused calls, which the Lua loop then sends as a batch of its own.
 */
export interface Need {
  requests: EffectRequest[];
  optional: boolean;
}

/** An effect's work (effect-plans.ts): yields what it needs, is resumed with the answers (null: an optional need dropped). */
export type EffectPlan = Generator<Need, LuaScalar[], EffectAnswer[] | null>;

/** A plan that must wait, and the need it waits on. */
export interface Waiting {
  plan: EffectPlan;
  need: Need;
}
