/**
 * Checking a model's reply before the loop acts on it: a reply is checked as a whole, and
 * one bad tool call fails the round so none of its calls runs ("The arguments the model sends").
 */
import type { Json } from '../json/json.ts';
import { canonicalJson } from '../json/canonical-json.ts';

/** A reply as the Lua runtime reads it: each call's arguments as JSON object text. */
export interface CheckedReply {
  content: string;
  tool_calls: { id: string; name: string; arguments_json: string }[];
  usage: Json;
}

const isObject = (v: unknown): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a provider's reply; a string is the Model-kind failure of the round. */
export function checkReply(reply: Json): CheckedReply | string {
  if (!isObject(reply)) return 'the model reply was not an object';
  const content = typeof reply.content === 'string' ? reply.content : '';
  const calls = Array.isArray(reply.tool_calls) ? reply.tool_calls : [];
  const seen = new Set<string>();
  const checked: CheckedReply['tool_calls'] = [];
  for (const call of calls) {
    if (!isObject(call)) return 'a tool call in the model reply was not an object';
    const { id, name } = call;
    if (typeof id !== 'string' || id.trim() === '') return 'a tool call in the model reply has a blank id';
    if (typeof name !== 'string' || name.trim() === '') return `tool call ${JSON.stringify(id)} in the model reply has a blank name`;
    if (seen.has(id)) return `two tool calls in the model reply share the id ${JSON.stringify(id)}`;
    seen.add(id);
    if (!isObject(call.arguments)) return 'tool call arguments were not a JSON object';
    checked.push({ id, name, arguments_json: canonicalJson(call.arguments) });
  }
  return { content, tool_calls: checked, usage: reply.usage ?? null };
}
