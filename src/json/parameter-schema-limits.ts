/**
 * The bounds on a tool's parameter schema, wherever it comes from (an MCP server's
 * `inputSchema`, an `http` Pack's `parameters` in runvil.yaml, a test file's Pack): a schema
 * is walked by the validator on every call and handed to a model on every round, so one
 * nested without end or megabytes long costs every run that has the tool; and each regular
 * expression in it must be one RE2 matches in linear time (linear-pattern.ts). Each place
 * that takes a schema says what is wrong in its own words, with the same phrase from here.
 */
import type { Json } from './json.ts';
import { compileLinearPattern } from './linear-pattern.ts';

/** The deepest a parameter schema may nest (objects and arrays, the schema itself at 1). */
export const MAX_SCHEMA_DEPTH = 32;
/** The longest a parameter schema may be, in characters of its JSON text. */
export const MAX_SCHEMA_CHARS = 64 * 1024;

/** Keywords whose values are data, not schemas: a `pattern` inside one is no regular expression. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

/**
 * Why `schema` cannot be a tool's parameter schema, as a phrase that follows "the schema"
 * (`is nested deeper than 32 levels`), or null when it is within the bounds and every
 * regular expression in it can be matched in linear time.
 */
export function parameterSchemaProblem(schema: unknown): string | null {
  if (depthOf(schema) > MAX_SCHEMA_DEPTH) return `is nested deeper than ${MAX_SCHEMA_DEPTH} levels`;
  if ((JSON.stringify(schema)?.length ?? 0) > MAX_SCHEMA_CHARS) return `is longer than ${MAX_SCHEMA_CHARS.toLocaleString('en-US')} characters of JSON`;
  for (const pattern of schemaPatterns(schema)) {
    const compiled = compileLinearPattern(pattern);
    if (!compiled.ok) return `has the pattern ${quotedPattern(pattern)}, which ${compiled.reason}`;
  }
  return null;
}

/**
 * Every regular expression of a schema: `pattern` values and `patternProperties` keys, at
 * any depth (under `properties`, `items`, `$defs`, `propertyNames`, the combinators...), but
 * not inside values that are data (`enum`, `const`, `default`, `examples`).
 */
export function schemaPatterns(schema: unknown): string[] {
  const patterns = new Set<string>();
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      pending.push(...node);
    } else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (DATA_KEYWORDS.has(key)) continue;
        if (key === 'pattern' && typeof value === 'string') patterns.add(value);
        if (key === 'patternProperties' && isObject(value)) for (const name of Object.keys(value)) patterns.add(name);
        pending.push(value);
      }
    }
  }
  return [...patterns];
}

/** How deep a JSON value nests, counted without recursion (a hostile schema may nest past any stack); stops past the bound. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_SCHEMA_DEPTH) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** A pattern as a message quotes it: JSON, cut after 80 characters. */
function quotedPattern(pattern: string): string {
  const quoted = JSON.stringify(pattern);
  return quoted.length > 80 ? `${quoted.slice(0, 80)}...` : quoted;
}

function isObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
