/**
 * Model rounds: a round's yielded values read into the entry's conversation, the context
 * precheck, the request the journal keeps, the reply checked and handed back to Lua with
 * its events, and the calls that run with the round (fused) when Lua would only batch them.
 */
import type { Json } from '../../json/json.ts';
import { Conversation } from '../conversation.ts';
import type { EffectAnswer, EffectRequest } from '../effects.ts';
import type { EventFields } from '../events.ts';
import type { LuaScalar } from '../lua/vm.ts';
import { checkReply } from '../model-reply.ts';
import type { RunContext } from '../run-context.ts';
import type { EntrySpec, EntryState } from './entry-types.ts';
import { decodeRound, encodeReply, failure, replyCall, replyCallCount, ROUND_TEXTS_AT, type BatchCall, type FusedRecords } from './protocol.ts';
import { assistantRecordText, contextWindowOf, decodeToolMap } from './protocol-records.ts';

/** A model round ready to send: its request, and how its answer goes back to Lua. */
export interface PreparedRound {
  request: EffectRequest;
  role: string;
  turn: number;
  /** The rendered list's wire names and tool ids, for a loop round; null for a one-off round. */
  tools: Record<string, string> | null;
  /** Whether the reply's calls may run with the round (see fusedCalls). */
  fuse: boolean;
}

/** A model round's yielded values read: the conversation brought up to date, the precheck made. */
export function prepareRound(run: RunContext, spec: EntrySpec, entry: EntryState, rest: LuaScalar[]): { refusal: string } | PreparedRound {
  const round = decodeRound(rest);
  if (round.toolMap !== null) entry.renderedTools = decodeToolMap(round.toolMap);
  // A one-off round's tool list always comes; a loop round's only when it changed.
  const tools = round.oneOff ? String(round.tools) : round.tools === null ? entry.toolsText : (entry.toolsText = round.tools);
  const target = round.oneOff ? new Conversation() : entry.conversation;
  if (round.fusedRecords) {
    const made = fusedRecords(entry, round.count);
    target.update(round.from, made.texts, 0, made.texts.length, made.values);
  } else target.update(round.from, rest, ROUND_TEXTS_AT, round.count);
  const refusal = precheck(target, round.head, tools, round.role, run.prompt.h1.prose);
  if (refusal) return { refusal };
  reportRoundStart(run, spec, target, round.oneOff ? 0 : round.from, round.role, round.turn);
  return {
    request: roundRequest(target, round.head, tools, round.role, run.prompt.h1.prose, run.events.last),
    role: round.role,
    turn: round.turn,
    tools: round.oneOff ? null : entry.renderedTools,
    fuse: round.fuse,
  };
}

/**
 * model_turn_started: what this round adds to the conversation the model is sent, for those
 * who watch the run: the records from position `from` on (the earlier ones are in the
 * entry's earlier model_turn_started events), with the system prose when the conversation
 * starts. `once` marks a one-off round (models.infer) over a conversation of its own. Made
 * only when reported: a replay counts the events the stream already holds.
 */
function reportRoundStart(run: RunContext, spec: EntrySpec, conversation: Conversation, from: number, role: string, turn: number): void {
  const system = run.prompt.h1.prose;
  const first = Math.max(from, 1);
  run.events.emit('model_turn_started', { section: spec.section.name, task: spec.chain, turn }, () => {
    const fields: EventFields = { from: first, messages: conversation.recordsFrom(first), role };
    if (from === 0) fields.once = true;
    if (first === 1 && system !== '') fields.system = system;
    return fields;
  });
}

/** The records the last fused round's answer carried, `count` of them as Lua says. */
function fusedRecords(entry: EntryState, count: number): FusedRecords {
  const records = entry.fusedRecords;
  if (records.texts.length !== count) throw new Error(`the Lua runtime named ${count} records of the last round, which made ${records.texts.length}`);
  return records;
}

/**
 * The calls of a loop round's reply when they run with the round, at once: every call names a
 * catalog tool of the rendered list, so the Lua loop would batch them all with nothing of its
 * own in between, and the round saves a trip through Lua. null when Lua runs them itself
 * (a local tool or a task built-in among them, a name out of scope, a failed round).
 * `values` is what answerRound gave the round.
 */
export function fusedCalls(round: PreparedRound, values: LuaScalar[]): BatchCall[] | null {
  if (!round.fuse || round.tools === null || values[0] !== true) return null;
  const count = replyCallCount(values);
  if (count === 0) return null;
  const calls: BatchCall[] = [];
  for (let k = 0; k < count; k++) {
    const call = replyCall(values, k);
    const tool = Object.hasOwn(round.tools, call.name) ? round.tools[call.name] : undefined;
    if (tool === undefined) return null;
    calls.push({ tool, name: call.name, args: JSON.parse(call.argumentsJson) as Json, caller: 'model', callId: call.id, turn: round.turn });
  }
  return calls;
}

/**
 * A model round's request: journaled as its op, role and the digest of its head, tools and
 * records (effects.ts's journaled). `request`, what the provider gets, is built only if the
 * Harness reads it (a live round, not a replay), during the round, while the conversation
 * still holds this round's records.
 */
function roundRequest(conversation: Conversation, head: string, tools: string, role: string, system: string, step: number): EffectRequest {
  return new RoundRequest(role, conversation.digest(head, tools), step, () => conversation.request(head, tools, system));
}

/**
 * A class rather than an object literal with a getter: measured on W2, the literal's getter
 * closure doubled what V8's young-generation collector promoted per run (10 MB to 20 MB over
 * the benchmark), and the build function is dropped once it has run.
 */
class RoundRequest {
  readonly op = 'model.round' as const;
  #build: (() => Json) | null;
  #built: Json = null;

  constructor(
    readonly role: string,
    readonly digest: string,
    readonly step: number,
    build: () => Json,
  ) {
    this.#build = build;
  }

  get request(): Json {
    if (this.#build) {
      this.#built = this.#build();
      this.#build = null;
    }
    return this.#built;
  }
}

/**
 * The context precheck: a round whose conversation cannot fit the role's context window is
 * refused before it is sent (the loop then compacts and retries once).
 */
function precheck(conversation: Conversation, head: string, tools: string, role: string, system: string): string | null {
  const window = contextWindowOf(head);
  if (window === null) return null;
  const needed = conversation.estimateTokens(tools, system);
  if (needed <= window) return null;
  return `the round needs about ${needed} tokens, more than the context window of ${window} that role "${role}" declares`;
}

/**
 * A model round's answer as the Lua runtime reads it: content, the number of calls, then
 * (id, name, arguments JSON) per call. Reports the round's model_turn_completed here, where
 * the reply is at hand, rather than re-encoding it in Lua.
 */
export function answerRound(
  run: RunContext,
  spec: EntrySpec,
  role: string,
  turn: number,
  answer: EffectAnswer,
  renderedTools: Record<string, string> | null,
): LuaScalar[] {
  if (!answer.ok) return failure(answer.error.kind, answer.error.message);
  const checked = checkReply(answer.value);
  if (typeof checked === 'string') return failure('model', checked);
  addUsage(run, checked.usage);
  const place = { section: spec.section.name, task: spec.chain, turn };
  run.events.emit('model_turn_completed', place, {
    content: checked.content,
    role,
    tool_calls: checked.tool_calls.length,
    usage: checked.usage,
  });
  const calls = checked.tool_calls.map((call) => ({ id: call.id, name: call.name, argumentsJson: call.arguments_json }));
  if (renderedTools === null) return encodeReply(checked.content, calls, null);
  // A loop round: its events and the assistant record come from here, where the reply is
  // at hand, so the Lua runtime neither encodes nor decodes it.
  if (checked.tool_calls.length > 0) {
    // Made only when reported: a replay counts the events the stream already holds.
    run.events.emit('assistant_tool_calls', place, () => ({
      calls: checked.tool_calls.map((call) => {
        const reported: { [key: string]: Json } = { arguments: JSON.parse(call.arguments_json) as Json, id: call.id, name: call.name };
        if (Object.hasOwn(renderedTools, call.name)) reported.tool = renderedTools[call.name]!;
        return reported;
      }),
    }));
  }
  return encodeReply(checked.content, calls, assistantRecordText(checked.content, calls));
}

function addUsage(run: RunContext, usage: Json): void {
  run.usage.rounds++;
  if (usage && typeof usage === 'object' && !Array.isArray(usage)) {
    if (typeof usage.input_tokens === 'number') run.usage.input_tokens += usage.input_tokens;
    if (typeof usage.output_tokens === 'number') run.usage.output_tokens += usage.output_tokens;
  }
}
