/**
 * The protocol's layouts of the conversation records the driver makes (protocol.ts names the
 * other protocol modules): a loop round's assistant record and a model call's tool record, as
 * the JSON texts Lua keeps with them and sends back with later rounds, and as the values a
 * fused round's records are (key for key what JSON.parse makes of the texts, built without
 * parsing them). Keys in sorted order, as the runtime's JSON encoder (json.lua) writes any
 * record, so a record's text is the same whichever side made it:
 * test/engine/protocol-records.test.ts encodes each in Lua and compares. And the other JSON
 * texts that cross whole: what the driver reads of a round's head (protocol.lua's round_head)
 * and of its tool map (tool_map), and the entry of a task built-in in a round's tool list
 * (tool_entry's layout, which the leaf `catalog` answers).
 */
import type { Json } from '../../json/json.ts';
import type { ReplyCall } from './protocol.ts';

/** The JSON text of a reply's assistant record: its content and, when it made calls, the calls (arguments as the reply's canonical JSON). */
export function assistantRecordText(content: string, calls: readonly ReplyCall[]): string {
  const head = `{"content":${JSON.stringify(content)},"role":"assistant"`;
  if (calls.length === 0) return `${head}}`;
  const made = calls.map((call) => `{"arguments":${call.argumentsJson},"id":${JSON.stringify(call.id)},"name":${JSON.stringify(call.name)}}`);
  return `${head},"tool_calls":[${made.join(',')}]}`;
}

/** The JSON text of a model call's tool record: the text the model reads, for the call's id. */
export function toolRecordText(content: string, callId: string | null): string {
  return `{"content":${JSON.stringify(content)},"role":"tool","tool_call_id":${JSON.stringify(callId)}}`;
}

/** A reply's assistant record as a value: assistantRecordText's, with each call's arguments as the value of its JSON. */
export function assistantRecordValue(content: string, calls: readonly { id: string; name: string; arguments: Json }[]): Json {
  if (calls.length === 0) return { content, role: 'assistant' };
  return { content, role: 'assistant', tool_calls: calls.map((call) => ({ arguments: call.arguments, id: call.id, name: call.name })) };
}

/** A model call's tool record as a value: toolRecordText's. */
export function toolRecordValue(content: string, callId: string): Json {
  return { content, role: 'tool', tool_call_id: callId };
}

/** A round's head as protocol.lua's round_head writes it: the role's config, the role, the turn. */
export interface RoundHead {
  config: Json;
  role: string;
  turn: number;
}

/** A round's head from its JSON text. */
export function decodeRoundHead(head: string): RoundHead {
  return JSON.parse(head) as RoundHead;
}

/**
 * The context window a round's head declares in its role's config, or null. Most roles
 * declare none, and their heads are not parsed.
 */
export function contextWindowOf(head: string): number | null {
  if (!head.includes('"context_window"')) return null;
  const { config } = decodeRoundHead(head);
  const window = config !== null && typeof config === 'object' && !Array.isArray(config) ? config.context_window : undefined;
  return typeof window === 'number' ? window : null;
}

/** An entry of a round's rendered tool list. */
export interface ToolListEntry {
  name: string;
  description: string;
  parameters: Json;
}

/** The JSON text of a tool list's entry, in protocol.lua's tool_entry layout (name, description, parameters). */
export function toolEntryText(entry: ToolListEntry): string {
  return JSON.stringify({ name: entry.name, description: entry.description, parameters: entry.parameters });
}

/**
 * A round's tool map from its JSON text: wire names to tool ids. Wire names come from Pack
 * manifests, so the map has no prototype (a wire named `__proto__` or `toString` is a name).
 */
export function decodeToolMap(text: string): Record<string, string> {
  return Object.assign(Object.create(null) as Record<string, string>, JSON.parse(text) as Record<string, string>);
}
