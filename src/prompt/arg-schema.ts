/**
 * The `schema:` of a `json` arg: a JSON Schema (2020-12) its value must fit, checked when a
 * run starts (run-args.ts) and carried as it stands into the arg's property of the prompt's
 * MCP `inputSchema`, its `$defs` lifted to the top there (a `$ref` to `#/$defs/<name>`
 * resolves against the document's root, so it keeps its meaning in either place). Schemas
 * come from a prompt's author, but a deployed prompt may be uploaded by anyone with
 * `prompts:write` and a value comes from any caller, so a schema has the bounds of a tool's
 * parameter schema (src/json/parameter-schema-limits.ts) and holds no regular expression
 * (`pattern`, `patternProperties`: V8 would match them by backtracking on the caller's text;
 * check such a shape in Lua), no `$id` (it would move where its references resolve) and no
 * reference but to its own `$defs`.
 */
import { Validator, type Schema } from '@cfworker/json-schema';
import type { Json } from '../json/json.ts';
import { parameterSchemaProblem } from '../json/parameter-schema-limits.ts';

/** The one dialect an arg's schema is read in. */
export const ARG_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** A JSON object. */
type JsonObject = { [key: string]: Json };

const validators = new WeakMap<object, Validator>();

/** Why `schema` cannot be an arg's schema (a phrase after "args.<name>.schema"), or null. */
export function argSchemaProblem(schema: Json): string | null {
  if (!isObject(schema)) return 'must be a JSON Schema object';
  const bounds = parameterSchemaProblem(schema);
  if (bounds !== null) return bounds;
  if (schema.$schema !== undefined && schema.$schema !== ARG_SCHEMA_DIALECT)
    return `says $schema ${JSON.stringify(schema.$schema)}; an arg's schema is JSON Schema 2020-12 (${ARG_SCHEMA_DIALECT}) or says none`;
  if (schema.$defs !== undefined && !isObject(schema.$defs)) return 'has $defs that is not an object of schemas';
  for (const [key, value] of walk(schema)) {
    // A key of `properties` may be any name, and then holds a schema (an object), never a keyword's string.
    if ((key === 'pattern' && typeof value === 'string') || (key === 'patternProperties' && isObject(value)))
      return `has ${key}: an arg's schema holds no regular expression (check such a shape in Lua, where the prompt reads the arg)`;
    if (typeof value !== 'string') continue;
    if (key === '$id' || key === '$anchor' || key === '$dynamicAnchor' || key === '$dynamicRef') return `has ${key}, which an arg's schema cannot use`;
    if (key === '$ref' && !/^#\/\$defs\/[^/]+$/.test(value))
      return `has $ref ${JSON.stringify(value)}: an arg's schema refers only to its own $defs (#/$defs/<name>)`;
    if (key === '$ref' && !(isObject(schema.$defs) && Object.hasOwn(schema.$defs, decodePointer(value.slice(8)))))
      return `has $ref ${JSON.stringify(value)}, which names no entry of its $defs`;
  }
  try {
    validatorOf(schema);
  } catch {
    return 'is not a JSON Schema the validator can read';
  }
  return null;
}

/** Why `value` does not fit `schema` (a phrase after the arg's name), or null when it fits. */
export function argValueProblem(schema: Json, value: Json): string | null {
  if (!isObject(schema)) return null;
  const outcome = validatorOf(schema).validate(value);
  if (outcome.valid) return null;
  // The deepest error says what is wrong where; the first ones only say that a branch failed.
  const error = outcome.errors.at(-1);
  const at = error?.instanceLocation.replace(/^#/, '') ?? '';
  return `does not fit its schema${at ? ` at ${at}` : ''}: ${error?.error ?? 'the value does not fit'}`;
}

/**
 * The `$defs` name two args' schemas both define differently, which cannot share the MCP
 * `inputSchema`'s one `$defs`; null when every name means one thing.
 */
export function clashingDefinition(schemas: readonly { arg: string; schema: Json }[]): { name: string; args: [string, string] } | null {
  const seen = new Map<string, { arg: string; text: string }>();
  for (const { arg, schema } of schemas) {
    if (!isObject(schema) || !isObject(schema.$defs)) continue;
    for (const [name, definition] of Object.entries(schema.$defs)) {
      const text = JSON.stringify(definition);
      const earlier = seen.get(name);
      if (earlier && earlier.text !== text) return { name, args: [earlier.arg, arg] };
      seen.set(name, { arg, text });
    }
  }
  return null;
}

/** The arg's property of an MCP `inputSchema` (its schema without `$schema` and `$defs`), and the `$defs` it brings. */
export function splitDefinitions(schema: Json): { property: JsonObject; defs: JsonObject } {
  if (!isObject(schema)) return { property: {}, defs: {} };
  const { $schema: _dialect, $defs, ...property } = schema;
  return { property, defs: isObject($defs) ? $defs : {} };
}

function validatorOf(schema: JsonObject): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema as Schema, '2020-12', false);
    validators.set(schema, validator);
  }
  return validator;
}

/** Every key of a schema and its value, at any depth, but inside values that are data. */
function* walk(schema: Json): Generator<[string, Json]> {
  const pending: Json[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (Array.isArray(node)) pending.push(...node);
    else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
        yield [key, value];
        pending.push(value);
      }
    }
  }
}

function decodePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
