/**
 * Checking a catalog tool call's arguments against the tool's JSON Schema before the Pack
 * runs it (issue 3: "Arguments a tool receives are checked against its JSON Schema before it
 * runs"). Tool schemas arrive at run time, from whatever Packs the Host has, so they are
 * interpreted by @cfworker/json-schema, which generates no code (workerd refuses `new
 * Function`, which ajv compiles with). One Validator per tool, built on first use and kept.
 *
 * A mismatch is one short model-safe line that names the tool by its wire name and the
 * first bad field, such as `web_fetch: argument "url" must be a string`. A missing required
 * argument reads like the runvil Packs' own texts, `web_fetch: missing url argument`
 * (docs/spec-notes.md says why).
 */
import { Validator, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema';
import { wireName } from '../prompt/name-grammar.ts';
import type { Json } from '../json/json.ts';
import { parameterSchemaProblem, schemaPatterns } from '../json/parameter-schema-limits.ts';
import { withLinearPatterns } from './linear-regexp.ts';
import type { ToolManifest } from './pack.ts';

/**
 * A tool's compiled check: a Validator (`linear` when its schema has regular expressions,
 * which then run on RE2: linear-regexp.ts), none (its schema describes no arguments), or why
 * it cannot check (a schema past the bounds of parameter-schema-limits.ts says which).
 */
type Compiled = { validator: Validator; linear: boolean } | { validator: null } | { broken: true; problem?: string };

const compiled = new WeakMap<ToolManifest, Compiled>();

/** The dialect a schema without `$schema` is read in. */
const DEFAULT_DRAFT: SchemaDraft = '2020-12';

/** The longest a field name or a quoted schema value gets in a message before it is cut. */
const MAX_TEXT = 80;

/**
 * Checks `args` against `tool.parameters`. Returns null when they fit (or when the tool's
 * parameters are not a JSON object, which describes no named arguments: such a tool is
 * left out of the run's offering, and a script call still runs it), else the model-safe
 * failure text.
 */
export function checkToolArguments(tool: ToolManifest, args: Json): string | null {
  const wire = wireName(tool.id);
  const check = compile(tool);
  if ('broken' in check) return brokenSchema(wire, check.problem);
  if (check.validator === null) return null;
  const validator = check.validator;
  let outcome;
  try {
    outcome = check.linear ? withLinearPatterns(() => validator.validate(args ?? {})) : validator.validate(args ?? {});
  } catch {
    // A schema that dereferenced but cannot run (such as a `pattern` that is no regular expression).
    compiled.set(tool, { broken: true });
    return brokenSchema(wire);
  }
  if (outcome.valid) return null;
  return `${wire}: ${describe(outcome.errors, tool.parameters as Schema, args ?? {})}`;
}

function brokenSchema(wire: string, problem?: string): string {
  return `${wire}: the tool's parameter schema ${problem ?? 'is not valid JSON Schema'}, so its arguments cannot be checked`;
}

/** The tool's Validator, built once per tool. */
function compile(tool: ToolManifest): Compiled {
  const known = compiled.get(tool);
  if (known) return known;
  let entry: Compiled;
  const schema = tool.parameters;
  const problem = isObject(schema) ? parameterSchemaProblem(schema) : null;
  if (!isObject(schema)) {
    entry = { validator: null };
  } else if (problem !== null) {
    entry = { broken: true, problem };
  } else {
    try {
      // A copy: the validator marks the schema objects it walks, and a manifest may be frozen.
      const validator = new Validator(structuredClone(schema) as Schema, draftOf(schema), true);
      entry = { validator, linear: schemaPatterns(schema).length > 0 };
    } catch {
      entry = { broken: true };
    }
  }
  compiled.set(tool, entry);
  return entry;
}

function draftOf(schema: { [key: string]: Json }): SchemaDraft {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (declared.includes('draft-04')) return '4';
  if (declared.includes('draft-07') || declared.includes('draft-06')) return '7';
  if (declared.includes('2019-09')) return '2019-09';
  return DEFAULT_DRAFT;
}

// Turning the validator's errors into one line ---------------------------------------------------

/** Keywords whose error only says that something beneath them failed; the error beneath is reported. */
const WRAPPERS = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'unevaluatedItems',
  '$ref',
  '$recursiveRef',
  'allOf',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
]);

/** Keywords reported as themselves: the errors of their alternatives say nothing on their own. */
const OPAQUE = new Set(['anyOf', 'oneOf', 'not', 'propertyNames', 'contains']);

function describe(errors: OutputUnit[], schema: Schema, args: Json): string {
  const opaque = errors.filter((e) => OPAQUE.has(e.keyword)).map((e) => e.keywordLocation);
  const inside = (e: OutputUnit) => opaque.some((location) => e.keywordLocation.startsWith(`${location}/`));
  const chosen = errors.find((e) => !WRAPPERS.has(e.keyword) && !inside(e)) ?? errors.find((e) => !inside(e)) ?? errors[0];
  if (!chosen) return "the arguments do not fit the tool's parameters";
  const path = instancePath(args, chosen.instanceLocation);
  if (path === null) return "the arguments do not fit the tool's parameters";
  const rule = schemaAt(schema, chosen.keywordLocation);
  return message(chosen, path, rule, args, errors);
}

function message(error: OutputUnit, path: (string | number)[], rule: Json | undefined, args: Json, errors: OutputUnit[]): string {
  const subject = path.length === 0 ? 'the arguments' : `argument ${quoted(fieldName(path))}`;
  const generic =
    path.length === 0
      ? `the arguments do not fit the tool's parameters (keyword ${JSON.stringify(error.keyword)})`
      : `${subject} does not fit the tool's parameters (keyword ${JSON.stringify(error.keyword)})`;
  const num = typeof rule === 'number' ? JSON.stringify(rule) : null;
  switch (error.keyword) {
    case 'required': {
      const name = missingName(rule, valueAt(args, path), error.error);
      return name === null ? generic : `missing ${bareOrQuoted(fieldName([...path, name]))} argument`;
    }
    case 'dependentRequired': {
      const match = /^Instance has "(.*)" but does not have "(.*)"\.$/.exec(error.error);
      if (!match) return generic;
      return `missing ${bareOrQuoted(fieldName([...path, match[2]!]))} argument, which ${quoted(fieldName([...path, match[1]!]))} needs`;
    }
    case 'false': {
      const last = path[path.length - 1];
      return typeof last === 'string' ? `unexpected argument ${quoted(fieldName(path))}` : `${subject} is not allowed`;
    }
    case 'type': {
      const types = Array.isArray(rule) ? rule : typeof rule === 'string' ? [rule] : null;
      if (!types || types.length === 0) return generic;
      const phrase = types.map((t) => (Object.hasOwn(TYPE_PHRASES, String(t)) ? TYPE_PHRASES[String(t)] : undefined) ?? `of type ${String(t)}`).join(' or ');
      return path.length === 0 ? `the arguments must be ${phrase}` : `${subject} must be ${phrase}`;
    }
    case 'enum':
      return Array.isArray(rule) ? `${subject} must be one of ${valueList(rule)}` : generic;
    case 'const':
      return rule === undefined ? generic : `${subject} must be ${cut(JSON.stringify(rule))}`;
    case 'minimum':
      return num ? `${subject} must be at least ${num}` : generic;
    case 'maximum':
      return num ? `${subject} must be at most ${num}` : generic;
    case 'exclusiveMinimum':
      return num ? `${subject} must be greater than ${num}` : generic;
    case 'exclusiveMaximum':
      return num ? `${subject} must be less than ${num}` : generic;
    case 'multipleOf':
      return num ? `${subject} must be a multiple of ${num}` : generic;
    case 'minLength':
      return num ? `${subject} must be at least ${num} characters long` : generic;
    case 'maxLength':
      return num ? `${subject} must be at most ${num} characters long` : generic;
    case 'pattern':
      return typeof rule === 'string' ? `${subject} must match the pattern ${cut(JSON.stringify(rule))}` : generic;
    case 'format':
      return typeof rule === 'string' ? `${subject} must be a valid ${cut(rule)}` : generic;
    case 'minItems':
      return num ? `${subject} must have at least ${num} item${rule === 1 ? '' : 's'}` : generic;
    case 'maxItems':
      return num ? `${subject} must have at most ${num} item${rule === 1 ? '' : 's'}` : generic;
    case 'uniqueItems':
      return `${subject} must not repeat an item`;
    case 'contains':
      return `${subject} must contain a matching item`;
    case 'minProperties':
      return num ? `${subject} must have at least ${num} field${rule === 1 ? '' : 's'}` : generic;
    case 'maxProperties':
      return num ? `${subject} must have at most ${num} field${rule === 1 ? '' : 's'}` : generic;
    case 'anyOf':
      return `${subject} does not match any of the forms the tool accepts`;
    case 'oneOf':
      return `${subject} must match exactly one of the forms the tool accepts`;
    case 'not':
      return `${subject} has a form the tool does not accept`;
    case 'propertyNames': {
      const child = errors.find((e) => e.keywordLocation.startsWith(`${error.keywordLocation}/`));
      const named = child ? instancePath(args, child.instanceLocation) : null;
      return named && named.length > 0 ? `unexpected argument ${quoted(fieldName(named))}` : generic;
    }
    default:
      return generic;
  }
}

const TYPE_PHRASES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** The first name `required` lists that the object lacks (read from the schema, else the validator's text). */
function missingName(rule: Json | undefined, value: Json | undefined, text: string): string | null {
  if (Array.isArray(rule) && isObject(value)) {
    const absent = rule.find((name) => typeof name === 'string' && !Object.hasOwn(value, name));
    if (typeof absent === 'string') return absent;
  }
  const match = /required property "(.*)"\.$/.exec(text);
  return match ? match[1]! : null;
}

/** `opt.depth`, `tags[1]`: keys joined with dots, array indexes in brackets. */
function fieldName(path: readonly (string | number)[]): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : text === '' ? part : `.${part}`;
  return cut(text);
}

function quoted(text: string): string {
  return JSON.stringify(text);
}

/** A plain name as it is (`url`), any other in quotes, so a message stays one readable line. */
function bareOrQuoted(text: string): string {
  return /^[A-Za-z0-9_.\-[\]]+$/.test(text) ? text : quoted(text);
}

function valueList(values: Json[]): string {
  const shown = values.slice(0, 10).map((v) => cut(JSON.stringify(v)));
  return shown.join(', ') + (values.length > 10 ? ', ...' : '');
}

function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}...` : text;
}

// JSON Pointers -----------------------------------------------------------------------------------

/** The segments of a validator location (`#/opt/depth`); null when it does not decode. */
function pointerSegments(location: string): string[] | null {
  if (location === '#' || location === '') return [];
  if (!location.startsWith('#/')) return null;
  try {
    return location
      .slice(2)
      .split('/')
      .map((segment) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    return null;
  }
}

/** The path of an instance location, with the indexes of arrays as numbers. */
function instancePath(args: Json, location: string): (string | number)[] | null {
  const segments = pointerSegments(location);
  if (segments === null) return null;
  const path: (string | number)[] = [];
  let node: Json | undefined = args;
  for (const segment of segments) {
    if (Array.isArray(node)) {
      path.push(Number(segment));
      node = node[Number(segment)];
    } else {
      path.push(segment);
      node = isObject(node) && Object.hasOwn(node, segment) ? node[segment] : undefined;
    }
  }
  return path;
}

/** The instance value at `path`, indexes of arrays read as numbers. */
function valueAt(value: Json, path: readonly (string | number)[]): Json | undefined {
  let node: Json | undefined = value;
  for (const part of path) {
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isObject(node) && Object.hasOwn(node, String(part))) node = node[String(part)];
    else return undefined;
  }
  return node;
}

/**
 * The schema value at a validator's keywordLocation, following local `$ref`s on the way
 * (`#/properties/a/$ref/minimum`); undefined when the location leaves the schema.
 */
function schemaAt(schema: Schema, location: string): Json | undefined {
  const segments = pointerSegments(location);
  if (segments === null) return undefined;
  const root = schema as unknown as Json;
  let node: Json | undefined = root;
  for (const segment of segments) {
    if (segment === '$ref' && isObject(node) && typeof node.$ref === 'string') {
      node = resolveLocalRef(root, node.$ref);
      continue;
    }
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isObject(node) && Object.hasOwn(node, segment)) node = node[segment];
    else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

function resolveLocalRef(root: Json, ref: string): Json | undefined {
  if (ref === '#') return root;
  const segments = pointerSegments(ref);
  if (segments === null) return undefined;
  let node: Json | undefined = root;
  for (const segment of segments) {
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isObject(node) && Object.hasOwn(node, segment)) node = node[segment];
    else return undefined;
  }
  return node;
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
