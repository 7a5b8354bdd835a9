/**
 * Reading the loosely typed JSON a provider answers: records, arguments, token counts. The
 * Engine checks the reply as a whole (src/engine/model-reply.ts); these only translate.
 */
import type { Json } from '../json/json.ts';
import type { ModelReply, ToolCall } from './provider.ts';

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string field, or '' when it is absent or not a string. */
export function stringField(value: unknown, key: string): string {
  const field = isRecord(value) ? value[key] : undefined;
  return typeof field === 'string' ? field : '';
}

/**
 * A tool call's arguments as the Engine wants them: JSON text is parsed; text that does not
 * parse goes through as it is, so the Engine refuses the round with its own message. A
 * blank text is an empty object (some OpenAI-compatible servers send '' for no arguments).
 */
export function toolArguments(value: unknown): Json {
  if (typeof value !== 'string') return (value ?? {}) as Json;
  if (value.trim() === '') return {};
  try {
    return JSON.parse(value) as Json;
  } catch {
    return value;
  }
}

/** A record's arguments as JSON text for the wire; Lua can hand back `{}` as an empty array. */
export function argumentsText(value: Json | undefined): string {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return '{}';
  return JSON.stringify(value);
}

/** The reply's usage when both counts are numbers. */
export function tokenUsage(input: unknown, output: unknown): Pick<ModelReply, 'usage'> {
  return typeof input === 'number' && typeof output === 'number' ? { usage: { input_tokens: input, output_tokens: output } } : {};
}

/** The base address without a trailing slash. */
export function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

/** An address's scheme, host and port; the address itself when it does not parse. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Whether two addresses share scheme, host and port (a key only goes where the Host sends it). */
export function sameOrigin(a: string, b: string): boolean {
  return originOf(a) === originOf(b);
}

/** Ids for calls that came without one: `call_1`, `call_2`, ... by place in the reply, so a replay reads the same. */
export function withIds(calls: ToolCall[]): ToolCall[] {
  return calls.map((call, index) => (call.id.trim() === '' ? { ...call, id: `call_${index + 1}` } : call));
}
