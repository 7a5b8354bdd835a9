/**
 * Canonical JSON text and JSON equality: the forms in which the journal, replays, tool
 * results and model requests compare values whose object keys may come in any order.
 * Platform-neutral.
 */
import type { Json } from './json.ts';

/**
 * JSON text with object keys sorted (bytewise, as the Lua runtime's encoder sorts them), so
 * two equal values give the same text on every run. Fields that are `undefined` are left out,
 * as JSON.stringify leaves them out; an `undefined` array item is written `null`.
 */
export function canonicalJson(value: Json | object): string {
  return write(value);
}

// Built as one string, with no array of parts: every tool call's arguments and every record
// a round makes are written here, on a replay too.
function write(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + (value[i] === undefined ? 'null' : write(value[i]));
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let text = '{';
  for (const key of keys) {
    const item = record[key];
    if (item !== undefined) text += (text.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + write(item);
  }
  return `${text}}`;
}

/**
 * Whether two JSON values are equal, object keys in any order. Walks both rather than
 * serialising them: a replay compares every effect it replays.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  // for-in rather than Object.keys: a replay compares two requests a step, and makes no key
  // lists this way (JSON values inherit no enumerable keys).
  let count = 0;
  for (const key in left) {
    const value = left[key];
    if (value === undefined) continue;
    count++;
    if (!Object.hasOwn(right, key) || !sameJson(value, right[key])) return false;
  }
  for (const key in right) if (right[key] !== undefined) count--;
  return count === 0;
}
