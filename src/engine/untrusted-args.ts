/**
 * Untrusted args (docs/language.md, "Untrusted args"): the args a run took from outside (a
 * trigger's payload), which its Lua reads as the run's envelope wraps untrusted text.
 *
 * A string is wrapped whole; in a table (a `json` arg: a payload, a list) each string is
 * wrapped where it sits, so the prompt still walks the payload by its keys and whatever text
 * it takes out is enveloped. Keys stay as they are: they are the payload's shape, which the
 * prompt names. Numbers, booleans and null carry no text (a typed arg was checked as one):
 * they stay plain, and an arg that holds nothing else is read as a trusted one is.
 */
import type { Json } from '../json/json.ts';
import { wrapUntrusted } from './untrusted-envelope.ts';

/** The run's args as its entries read them. */
export interface EntryArgs {
  /** JSON text of the args every entry holds from its start. */
  plainText: string;
  /** The args held back until a chain reads one, and their wrapped values' JSON text; null when none. */
  held: { names: string[]; namesText: string; text: string } | null;
  /** Every arg named untrusted that the run has (the run_started event lists them). */
  untrusted: string[];
}

/** Splits the run's args into those read as given and the untrusted ones read wrapped. */
export function entryArgs(args: { [name: string]: Json }, untrustedNames: readonly string[], nonce: string): EntryArgs {
  const untrusted = [...new Set(untrustedNames)].filter((name) => Object.hasOwn(args, name));
  // Keyed by the prompt's arg names: no inherited names.
  const plain = Object.create(null) as { [name: string]: Json };
  const wrapped = Object.create(null) as { [name: string]: Json };
  for (const name of Object.keys(args)) {
    const value = args[name]!;
    if (untrusted.includes(name) && holdsText(value)) wrapped[name] = wrapStrings(value, nonce);
    else plain[name] = value;
  }
  const names = Object.keys(wrapped);
  return {
    plainText: JSON.stringify(plain),
    held: names.length === 0 ? null : { names, namesText: JSON.stringify(names), text: JSON.stringify(wrapped) },
    untrusted,
  };
}

/** Whether a value carries text: a string, or a table (its keys are text even when its values are not). */
function holdsText(value: Json): boolean {
  return typeof value === 'string' || (value !== null && typeof value === 'object');
}

/** The value with each string in it wrapped in the run's envelope. */
function wrapStrings(value: Json, nonce: string): Json {
  if (typeof value === 'string') return wrapUntrusted(value, nonce);
  if (Array.isArray(value)) return value.map((item) => wrapStrings(item, nonce));
  if (value !== null && typeof value === 'object') {
    // Built without a prototype: the payload's keys are data, and `__proto__` is one like any other.
    const out = Object.create(null) as { [key: string]: Json };
    for (const key of Object.keys(value)) out[key] = wrapStrings(value[key]!, nonce);
    return out;
  }
  return value;
}
