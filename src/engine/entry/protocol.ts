/**
 * The protocol between the section driver and the Lua runtime: the layouts of the plain
 * values that cross the boundary (scalars only: positional, since a table would cost a
 * JSON text or a walk on every crossing). This module alone knows the positions on the
 * TypeScript side; the runtime's models.lua, main.lua and base.lua write and read them on
 * the Lua side, as their comments say. test/engine/entry-protocol.test.ts pins them.
 *
 * - The entry (the leaf `entry`, read by main.lua's `__rv_bind`): ENTRY_FIELDS, in order.
 * - A model round, yielded as ('effect', 'model.round', ...ROUND_FIELDS, ...changed record texts).
 * - A round's answer: ok, content, call count n, then (id, name, arguments JSON) per call,
 *   then, for a loop round, the assistant record's JSON; a fused round appends its batch's answer.
 * - A tool-call batch, yielded as ('batch', n, then BATCH_CALL_FIELDS per call).
 * - A batch's answer: (ok, text, tool record JSON or nil) per call.
 * - Any failure: false, the error's Lua kind, its message.
 */
import type { Json } from '../../json/json.ts';
import type { LuaScalar } from '../lua/vm.ts';

/** What `__rv_bind` learns of its entry: how it was entered, its arguments, the run's facts. */
export interface EntryFacts {
  kind: string;
  name: string;
  /** How many blocks the section's prologue and epilogue hold. */
  prologue: number;
  epilogue: number;
  hasProse: boolean;
  /** JSON text of a call's extra arguments or a task's input; null for other entries. */
  argsText: string | null;
  /** JSON text of the run's arguments. */
  runArgsText: string;
  /** JSON text of a fanout arm's item; null for other entries. */
  itemText: string | null;
  runId: string;
  sectionName: string;
  taskId: string;
  promptName: string;
  promptTitle: string;
  promptDescription: string;
}

/** The entry's fields in the order `__rv_bind` reads them (main.lua). */
export const ENTRY_FIELDS = [
  'kind',
  'name',
  'prologue',
  'epilogue',
  'hasProse',
  'argsText',
  'runArgsText',
  'itemText',
  'runId',
  'sectionName',
  'taskId',
  'promptName',
  'promptTitle',
  'promptDescription',
] as const satisfies readonly (keyof EntryFacts)[];

/** The entry's values for `__rv_bind`. */
export function encodeEntry(facts: EntryFacts): LuaScalar[] {
  return ENTRY_FIELDS.map((field) => facts[field]);
}

/** A model round as the runtime yields it (models.lua's model_round). */
export interface RoundYield {
  /** The round's head: role, config and turn, as JSON text. */
  head: string;
  role: string;
  turn: number;
  /** The rendered tool list's JSON; null when a loop round's list did not change since the last. */
  tools: string | null;
  /** The rendered list's wire names to tool ids, as JSON; only with the section's first round. */
  toolMap: string | null;
  /** Whether the reply's calls may run with the round (fused). */
  fuse: boolean;
  /** A one-off round (models.infer): over its own single record, with no tools. */
  oneOff: boolean;
  /** Where the changed records start in the conversation (1-based); 1 for a one-off round. */
  from: number;
  /** How many records changed. */
  count: number;
  /** True when the changed records are those the driver made in the last fused round (not sent again). */
  made: boolean;
}

/** Where a round's fields start in the values after the op name, and where its record texts start. */
const ROUND_AT = 1;
/** The position of the first changed record's text in the values after 'model.round'. */
export const ROUND_TEXTS_AT = ROUND_AT + 8;

/**
 * A model round's fields from the values after the op name `model.round`. On the wire `from`
 * 0 means a one-off round, and a negative count names the records the driver made.
 */
export function decodeRound(rest: readonly LuaScalar[]): RoundYield {
  const [head, role, turn, tools, toolMap, fuse, from, count] = rest.slice(ROUND_AT, ROUND_TEXTS_AT);
  const oneOff = from === 0;
  return {
    head: String(head),
    role: String(role),
    turn: Number(turn),
    tools: tools === null ? null : String(tools),
    toolMap: typeof toolMap === 'string' ? toolMap : null,
    fuse: fuse === true,
    oneOff,
    from: oneOff ? 1 : Number(from),
    count: Math.abs(Number(count)),
    made: Number(count) < 0,
  };
}

/** The values models.lua yields for a round (after 'model.round'): the inverse of decodeRound, for tests. */
export function encodeRound(round: RoundYield, texts: readonly string[]): LuaScalar[] {
  return [
    'model.round',
    round.head,
    round.role,
    round.turn,
    round.tools,
    round.toolMap,
    round.fuse,
    round.oneOff ? 0 : round.from,
    round.made ? -round.count : round.count,
    ...texts,
  ];
}

/** One call of a reply, as a round's answer carries it. */
export interface ReplyCall {
  id: string;
  name: string;
  argumentsJson: string;
}

/** A round's successful answer: content, the calls, and for a loop round the assistant record. */
export function encodeReply(content: string, calls: readonly ReplyCall[], assistantRecord: string | null): LuaScalar[] {
  const values: LuaScalar[] = [true, content, calls.length];
  for (const call of calls) values.push(call.id, call.name, call.argumentsJson);
  if (assistantRecord !== null) values.push(assistantRecord);
  return values;
}

/** The number of calls a successful round's answer carries. */
export function replyCallCount(values: readonly LuaScalar[]): number {
  return Number(values[2]);
}

/** Call `k` (from 0) of a successful round's answer. */
export function replyCall(values: readonly LuaScalar[], k: number): ReplyCall {
  return { id: String(values[3 + 3 * k]), name: String(values[4 + 3 * k]), argumentsJson: String(values[5 + 3 * k]) };
}

/**
 * The records a fused round's answer made, as the Lua loop appends them: the assistant
 * record, then each call's tool record (the third value of its batch answer).
 */
export function madeRecordTexts(values: readonly LuaScalar[]): string[] {
  const count = replyCallCount(values);
  const at = 3 + 3 * count;
  const records = [String(values[at])];
  for (let k = 1; k <= count; k++) records.push(String(values[at + 3 * k]));
  return records;
}

/** Who made a tool call. */
export type Caller = 'script' | 'model';

/** One call of a tool-call batch. */
export interface BatchCall {
  tool: string;
  name: string;
  args: Json;
  caller: Caller;
  callId: string | null;
  turn: number;
}

/** A batch call's fields in the order base.lua's R.batch writes them (arguments as JSON text). */
export const BATCH_CALL_FIELDS = ['tool', 'name', 'args', 'caller', 'callId', 'turn'] as const satisfies readonly (keyof BatchCall)[];

/** A batch's calls from the values after the op name `batch`: the count, then six values per call. */
export function decodeBatch(flat: readonly LuaScalar[]): BatchCall[] {
  const count = Number(flat[0]);
  const width = BATCH_CALL_FIELDS.length;
  return Array.from({ length: count }, (_, k) => {
    const [tool, name, argsJson, caller, callId, turn] = flat.slice(1 + k * width, 1 + (k + 1) * width);
    return {
      tool: String(tool),
      name: String(name),
      args: JSON.parse(String(argsJson)) as Json,
      caller: caller as Caller,
      callId: callId === null ? null : String(callId),
      turn: Number(turn),
    };
  });
}

/** The values R.batch yields for `calls` (after 'batch'): the inverse of decodeBatch, for tests. */
export function encodeBatch(calls: readonly BatchCall[]): LuaScalar[] {
  const values: LuaScalar[] = [calls.length];
  for (const call of calls) values.push(call.tool, call.name, JSON.stringify(call.args), call.caller, call.callId, call.turn);
  return values;
}

/** A failure as the runtime reads it: false, the error's Lua kind, its message. */
export function failure(kind: string, message: string): LuaScalar[] {
  return [false, kind, message];
}
