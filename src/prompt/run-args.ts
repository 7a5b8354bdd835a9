/**
 * A run's arguments against the prompt's `args:` declaration: `--arg key=value` texts are
 * coerced by the declared type, values from a test file are checked as they are (a `json`
 * arg's value against its `schema:` too, arg-schema.ts), defaults fill what was not given,
 * and anything undeclared, ill-typed, misfitting or missing is refused.
 */
import { argValueProblem } from './arg-schema.ts';
import type { ArgSpec, ArgType } from './types.ts';
import type { Json } from '../json/json.ts';

/** The run's arguments, or why they do not fit the prompt (naming the argument). */
export type ArgsOutcome = { ok: true; args: { [name: string]: Json } } | { ok: false; arg: string; message: string };

/** Coerces command-line `--arg` pairs by the declared types and applies defaults. */
export function argsFromCommandLine(declared: Record<string, ArgSpec>, given: readonly { key: string; value: string }[]): ArgsOutcome {
  const values = new Map<string, Json>();
  for (const { key, value } of given) {
    const spec = Object.hasOwn(declared, key) ? declared[key] : undefined;
    if (!spec) return unknownArg(declared, key);
    if (values.has(key)) return { ok: false, arg: key, message: `--arg ${key} is given twice` };
    const coerced = coerce(spec.type, value);
    if (!coerced.ok) return { ok: false, arg: key, message: `--arg ${key}=${value}: ${key} ${coerced.problem}` };
    const misfit = spec.schema !== undefined ? argValueProblem(spec.schema, coerced.value) : null;
    if (misfit !== null) return { ok: false, arg: key, message: `--arg ${key}=${value}: ${key} ${misfit}` };
    values.set(key, coerced.value);
  }
  return complete(declared, values, (name) => `; pass --arg ${name}=VALUE`);
}

/** Checks argument values written as data (a test file's `args:`) and applies defaults. */
export function argsFromData(declared: Record<string, ArgSpec>, given: { [key: string]: Json }): ArgsOutcome {
  const values = new Map<string, Json>();
  for (const [key, value] of Object.entries(given)) {
    const spec = Object.hasOwn(declared, key) ? declared[key] : undefined;
    if (!spec) return unknownArg(declared, key);
    // A string written for a typed arg reads as it would on the command line, so `n: "3"` is 3.
    const checked = typeof value === 'string' && spec.type !== 'json' ? coerce(spec.type, value) : check(spec.type, value);
    if (!checked.ok) return { ok: false, arg: key, message: `args.${key}: ${key} ${checked.problem}` };
    const misfit = spec.schema !== undefined ? argValueProblem(spec.schema, checked.value) : null;
    if (misfit !== null) return { ok: false, arg: key, message: `args.${key}: ${key} ${misfit}` };
    values.set(key, checked.value);
  }
  return complete(declared, values, () => '');
}

type Checked = { ok: true; value: Json } | { ok: false; problem: string };

const A_TYPE: Record<ArgType, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)',
  json: 'JSON',
};

function coerce(type: ArgType, text: string): Checked {
  const refuse = (): Checked => ({ ok: false, problem: `takes ${A_TYPE[type]}, got ${JSON.stringify(text)}` });
  switch (type) {
    case 'string':
      return { ok: true, value: text };
    case 'integer': {
      const value = Number(text);
      return /^[+-]?[0-9]+$/.test(text.trim()) && Number.isSafeInteger(value) ? { ok: true, value } : refuse();
    }
    case 'number': {
      const value = Number(text);
      return text.trim() !== '' && Number.isFinite(value) ? { ok: true, value } : refuse();
    }
    case 'boolean':
      return text === 'true' ? { ok: true, value: true } : text === 'false' ? { ok: true, value: false } : refuse();
    case 'json':
      try {
        return { ok: true, value: JSON.parse(text) as Json };
      } catch (error) {
        return { ok: false, problem: `takes JSON, and ${JSON.stringify(text)} is not JSON (${(error as Error).message})` };
      }
  }
}

function check(type: ArgType, value: Json): Checked {
  const fits =
    type === 'json' ||
    (type === 'string' && typeof value === 'string') ||
    (type === 'integer' && typeof value === 'number' && Number.isSafeInteger(value)) ||
    (type === 'number' && typeof value === 'number' && Number.isFinite(value)) ||
    (type === 'boolean' && typeof value === 'boolean');
  return fits ? { ok: true, value } : { ok: false, problem: `takes ${A_TYPE[type]}, got ${JSON.stringify(value)}` };
}

function unknownArg(declared: Record<string, ArgSpec>, key: string): ArgsOutcome {
  const names = Object.keys(declared);
  const known = names.length === 0 ? 'the prompt declares no args' : `the prompt declares ${names.map((n) => `\`${n}\``).join(', ')}`;
  return { ok: false, arg: key, message: `unknown arg \`${key}\`: ${known}` };
}

function complete(declared: Record<string, ArgSpec>, values: Map<string, Json>, hint: (name: string) => string): ArgsOutcome {
  const args: { [name: string]: Json } = {};
  for (const [name, spec] of Object.entries(declared)) {
    const value = values.has(name) ? values.get(name)! : spec.default;
    if (value === undefined) {
      return { ok: false, arg: name, message: `missing required arg \`${name}\` (${spec.type})${hint(name)}` };
    }
    args[name] = value;
  }
  return { ok: true, args };
}
