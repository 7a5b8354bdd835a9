/**
 * The protocol between the section driver and the Lua runtime: the layouts of the plain
 * values that cross the boundary. Only scalars cross, in a fixed order (a table would cost
 * a JSON text or a walk on every crossing); the protocol modules alone know the orders on
 * the TypeScript side, as src/engine/lua/runtime/protocol.lua alone does on the Lua side, and
 * test/engine/protocol*.test.ts run both against each other. This one holds what the thread
 * yields and is answered; protocol-leaves.ts what the leaves answer and take (the catalog, a
 * var read, an event's fields); protocol-records.ts the conversation records the driver makes.
 *
 * - The entry (the leaf `entry`, read by main.lua's `__rv_bind`): ENTRY_FIELDS, in order.
 * - An effect, yielded as ('effect', op, payload JSON); a model round as ('effect',
 *   'model.round', ...ROUND_FIELDS, ...the changed records' texts).
 * - A round's answer: true, content, call count n, then (id, name, arguments JSON) per call,
 *   then, for a loop round, the assistant record's JSON; a fused round appends its batch's answer.
 * - A tool-call batch, yielded as ('batch', n, then BATCH_CALL_FIELDS per call).
 * - A batch's answer: (ok, text, tool record JSON or null) per call.
 * - An Engine operation (R.request), yielded after the mark as (op, ...fields): EngineRequest,
 *   answered as callAnswer, awaitAnswer and fanoutAnswer say.
 * - The entry's end, as `__rv_main` returns it: EntryEnd.
 * - Any failure: false, the error's Lua kind, its message.
 */
import type { Json } from '../../json/json.ts';
import type { LuaScalar } from '../lua/vm.ts';
import { assistantRecordValue, toolRecordValue } from './protocol-records.ts';

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
  /** JSON text of the run's arguments, but the untrusted ones held back. */
  runArgsText: string;
  /** JSON text of the names of the untrusted args held back (the leaf `untrusted_args` gives them); null when none. */
  untrustedArgNames: string | null;
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
  'untrustedArgNames',
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

/** A store or clock effect, yielded as ('effect', op, payload): the op and its payload's JSON text. */
export interface EffectYield {
  op: string;
  payloadText: string;
}

/** A store or clock effect from its values after 'effect'. */
export function decodeEffect(rest: readonly LuaScalar[]): EffectYield {
  return { op: String(rest[0]), payloadText: String(rest[1]) };
}

/** A model round as the runtime yields it (models.lua's model_round, protocol.lua's encode_round). */
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
  /** Where the changed records start in the conversation (1-based). */
  from: number;
  /** How many records changed. */
  count: number;
  /**
   * True when the changed records are the ones the driver made with the last round, which ran
   * its calls (fused): the driver keeps their texts (EntryState.fusedRecords), so Lua names
   * them rather than sending them back, and no texts follow the fields.
   */
  fusedRecords: boolean;
}

/** A round's fields in the order they cross after the op name (protocol.lua's ROUND_FIELDS). */
export const ROUND_FIELDS = [
  'head',
  'role',
  'turn',
  'tools',
  'toolMap',
  'fuse',
  'oneOff',
  'from',
  'count',
  'fusedRecords',
] as const satisfies readonly (keyof RoundYield)[];

/** The position of the first changed record's text in a round's values (after 'effect'). */
export const ROUND_TEXTS_AT = 1 + ROUND_FIELDS.length;

/** A model round's fields from its values after 'effect' (the op name `model.round`, then the fields). */
export function decodeRound(rest: readonly LuaScalar[]): RoundYield {
  const [, head, role, turn, tools, toolMap, fuse, oneOff, from, count, fusedRecords] = rest;
  return {
    head: String(head),
    role: String(role),
    turn: Number(turn),
    tools: typeof tools === 'string' ? tools : null,
    toolMap: typeof toolMap === 'string' ? toolMap : null,
    fuse: fuse === true,
    oneOff: oneOff === true,
    from: Number(from),
    count: Number(count),
    fusedRecords: fusedRecords === true,
  };
}

/** A round's values after 'effect', as protocol.lua's encode_round writes them: the inverse of decodeRound, for tests. */
export function encodeRound(round: RoundYield, texts: readonly string[]): LuaScalar[] {
  const fields = ROUND_FIELDS.map((field) => round[field]);
  return ['model.round', ...fields, ...(round.fusedRecords ? [] : texts)];
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

/** The records a fused round's answer made: their JSON texts, and the same records as values. */
export interface FusedRecords {
  texts: string[];
  values: Json[];
}

/**
 * The records a fused round's answer made, as the Lua loop appends them: the assistant
 * record, then each call's tool record (the third value of its batch answer). Their values
 * are what JSON.parse would make of the texts, key for key, built from the values the texts
 * were written from (a call's arguments from its arguments JSON), so a request over a long
 * conversation a replay rebuilt parses none of them.
 */
export function fusedRecordsOf(values: readonly LuaScalar[]): FusedRecords {
  const count = replyCallCount(values);
  const at = 3 + 3 * count;
  const texts = [String(values[at])];
  const calls: { id: string; name: string; arguments: Json }[] = [];
  const toolRecords: Json[] = [];
  for (let k = 1; k <= count; k++) {
    texts.push(String(values[at + 3 * k]));
    const call = replyCall(values, k - 1);
    calls.push({ id: call.id, name: call.name, arguments: JSON.parse(call.argumentsJson) as Json });
    toolRecords.push(toolRecordValue(String(values[at + 3 * k - 1]), call.id));
  }
  return { texts, values: [assistantRecordValue(String(values[1]), calls), ...toolRecords] };
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

/** A batch's calls from the values after `batch`: the count, then BATCH_CALL_FIELDS per call. */
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

/** One call's answer in a batch: whether it succeeded, the text its caller sees, and a model call's tool record JSON. */
export interface BatchAnswer {
  ok: boolean;
  text: string;
  record: string | null;
}

/** A batch's answers as the runtime reads them (protocol.lua's decode_batch_answers): (ok, text, record) per call. */
export function encodeBatchAnswers(answers: readonly BatchAnswer[]): LuaScalar[] {
  const values: LuaScalar[] = [];
  for (const answer of answers) values.push(answer.ok, answer.text, answer.record);
  return values;
}

/** A failure as the runtime reads it: false, the error's Lua kind, its message. */
export function failure(kind: string, message: string): LuaScalar[] {
  return [false, kind, message];
}

/**
 * An Engine operation the runtime asks the driver for (protocol.lua's encode_call ...
 * encode_pause), or `kept`: the effect values the leaf `answered` kept, to be answered once
 * the driver has waited for them (encode_kept).
 */
export type EngineRequest =
  | { op: 'call'; section: string; argsJson: string }
  | { op: 'await'; idsJson: string; forModel: boolean }
  | { op: 'fanout'; section: string; itemsJson: string }
  | { op: 'jump'; section: string }
  | { op: 'pause' }
  | { op: 'kept' };

/** An Engine operation from the values the thread yielded after the mark. */
export function decodeRequest(values: readonly LuaScalar[]): EngineRequest {
  const [op, a, b] = values;
  switch (op) {
    case 'call':
      return { op, section: String(a), argsJson: String(b) };
    case 'await':
      return { op, idsJson: String(a), forModel: b === true };
    case 'fanout':
      return { op, section: String(a), itemsJson: String(b) };
    case 'jump':
      return { op, section: String(a) };
    case 'pause':
    case 'kept':
      return { op };
    default:
      throw new Error(`the Lua runtime asked for an unknown operation ${String(op)}`);
  }
}

/** The values protocol.lua yields for `request` (after the mark): the inverse of decodeRequest, for tests. */
export function encodeRequest(request: EngineRequest): LuaScalar[] {
  switch (request.op) {
    case 'call':
      return [request.op, request.section, request.argsJson];
    case 'await':
      return [request.op, request.idsJson, request.forModel];
    case 'fanout':
      return [request.op, request.section, request.itemsJson];
    case 'jump':
      return [request.op, request.section];
    case 'pause':
    case 'kept':
      return [request.op];
  }
}

/** A called section's answer: true and the text it returned (null when it fell through). */
export function callAnswer(text: string | null): LuaScalar[] {
  return [true, text];
}

/** A task's outcome as an await hands it back: a completed task's result, or another's error. */
export interface TaskOutcome {
  id: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled';
  result: string | null;
  error: { kind: string; message: string } | null;
}

/**
 * An await's answer: the tasks' outcomes as a JSON list, which tasks.lua decodes and reads by
 * name ({id, status, result} for a completed task, {id, status, kind, message} for another),
 * and whether any had seen untrusted text.
 */
export function awaitAnswer(outcomes: readonly TaskOutcome[], tainted: boolean): LuaScalar[] {
  const listed = outcomes.map(({ id, status, result, error }) =>
    status === 'completed' ? { id, status, result } : { id, status, kind: error!.kind, message: error!.message },
  );
  return [JSON.stringify(listed), tainted];
}

/** A fanout's answer: true and the results as JSON, or a failure naming the task that failed. */
export function fanoutAnswer(ended: { ok: true; resultsJson: string } | { ok: false; kind: string; message: string; task: string }): LuaScalar[] {
  return ended.ok ? [true, ended.resultsJson] : [...failure(ended.kind, ended.message), ended.task];
}

/** How an entry ended, as `__rv_main` returns it (protocol.lua's end_return ... end_stop). */
export type EntryEnd =
  { end: 'return'; text: string } | { end: 'fall' } | { end: 'error'; kind: string; message: string; traceback: string | null } | { end: 'stop' };

/** An entry's end from the values `__rv_main` returned. */
export function decodeEnd(values: readonly LuaScalar[]): EntryEnd {
  const [end, a, b, c] = values;
  switch (end) {
    case 'return':
      return { end, text: String(a) };
    case 'fall':
    case 'stop':
      return { end };
    case 'error':
      return { end, kind: String(a), message: String(b), traceback: typeof c === 'string' ? c : null };
    default:
      throw new Error(`the Lua runtime ended an entry with ${String(end)}`);
  }
}

/** The values protocol.lua returns for `end`: the inverse of decodeEnd, for tests. */
export function encodeEnd(entryEnd: EntryEnd): LuaScalar[] {
  switch (entryEnd.end) {
    case 'return':
      return [entryEnd.end, entryEnd.text];
    case 'error':
      return [entryEnd.end, entryEnd.kind, entryEnd.message, entryEnd.traceback];
    default:
      return [entryEnd.end];
  }
}
