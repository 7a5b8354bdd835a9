/**
 * Turns ajv's errors against the frontmatter schema into messages a prompt author can act
 * on: which key, what it must be, what it was. The `invalid frontmatter: ` prefix is added
 * by the caller, once, for every frontmatter message.
 */
import type { ErrorObject } from 'ajv';
import schema from './frontmatter-schema.json';
import { ALIAS_GRAMMAR } from './name-grammar.ts';

/** One shape problem: its message, the path it is about, and whether to point at the key. */
export interface ShapeIssue {
  message: string;
  path: string[];
  /** Point at the key of `path` (unknown or misnamed keys), its value, or nowhere. */
  at: 'key' | 'value' | 'none';
}

/** The message part every non-string `uses:` entry gets, as the Tools chapter quotes it. */
export const EXPECTED_USES_ENTRY = 'expected a Pack id, such as `web`, or vendor/name, such as `acme/web`';

const ARG_TYPES = schema.definitions.argType.enum;

/** Maps one ajv error to an issue; undefined for errors another one already reports. */
export function describeSchemaError(error: ErrorObject, data: unknown): ShapeIssue | undefined {
  const path = pointerToPath(error.instancePath);
  const value = valueAt(data, path);
  const name = renderPath(path);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const where = path.length > 0 ? ` in \`${name}\`` : '';
      const message = `missing required key \`${String(params.missingProperty)}\`${where}`;
      return { message, path, at: path.length > 0 ? 'key' : 'none' };
    }
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const where = path.length > 0 ? ` in \`${name}\`` : '';
      const message = `unknown key \`${key}\`${where}; allowed keys: ${allowedKeys(path).join(', ')}`;
      return { message, path: [...path, key], at: 'key' };
    }
    case 'propertyNames': {
      const key = String(params.propertyName);
      const what = path[0] === 'models' ? 'role label' : 'arg name';
      const message = `invalid ${what} ${JSON.stringify(key)} under \`${name}\`: expected ${ALIAS_GRAMMAR}`;
      return { message, path: [...path, key], at: 'key' };
    }
    case 'pattern':
      // The propertyNames error above already names a bad key; this is its inner twin.
      if (error.propertyName !== undefined) return undefined;
      return { message: patternMessage(name, value), path, at: 'value' };
    case 'if':
      // Only says a branch failed; the branch's own errors say how.
      return undefined;
    case 'const':
      return { message: `\`runvil\` must be 0 (the language version), got ${show(value)}`, path, at: 'value' };
    case 'enum':
      return { message: `\`${name}\` must be one of ${ARG_TYPES.join(', ')}, got ${show(value)}`, path, at: 'value' };
    case 'minimum':
      return { message: `\`${name}\` must be at least ${String(params.limit)}, got ${show(value)}`, path, at: 'value' };
    case 'type':
      return { message: typeMessage(path, String(params.type), value), path, at: 'value' };
    default:
      return { message: `\`${name}\` ${error.message ?? 'is invalid'}`, path, at: 'value' };
  }
}

function typeMessage(path: string[], type: string, value: unknown): string {
  const name = renderPath(path);
  const got = `got ${show(value)}`;
  const [top, key, field] = path;
  if (top === undefined) return `the frontmatter must be a map of keys, such as \`name: ask-once\`, ${got}`;
  if (top === 'uses' && key !== undefined) return `invalid uses entry at index ${key}: ${EXPECTED_USES_ENTRY}`;
  if (top === 'uses') return `\`uses\` must be a list of Pack ids, such as [web, user-input], ${got}`;
  if (top === 'models' && key === undefined) return `\`models\` must be a map from role label to model settings, ${got}`;
  if (top === 'models' && field === undefined) {
    return `\`${name}\` must be a map of model settings, such as {} for the Host's default model, ${got}`;
  }
  if (top === 'args' && key === undefined) return `\`args\` must be a map from arg name to type, ${got}`;
  if (top === 'args' && field === undefined) {
    return `\`${name}\` must be a type (${ARG_TYPES.join(', ')}) or a map with \`type\`, ${got}`;
  }
  if (top === 'args' && field === 'default') return `\`${name}\` must be ${article(type)} to match the arg's type, ${got}`;
  return `\`${name}\` must be ${article(type)}, ${got}`;
}

function patternMessage(name: string, value: unknown): string {
  if (name === 'name') {
    return `\`name\` must be 1 to 64 lowercase letters, digits and '-', such as \`ask-once\`, got ${show(value)}`;
  }
  if (name === 'description') return '`description` must not be empty';
  return `\`${name}\` is malformed, got ${show(value)}`;
}

function allowedKeys(path: string[]): string[] {
  if (path.length === 0) return Object.keys(schema.properties);
  if (path[0] === 'models') return Object.keys(schema.definitions.modelConfig.properties);
  return Object.keys(schema.definitions.argSpec.properties);
}

function article(type: string): string {
  const names: Record<string, string> = { object: 'a map', array: 'a list', integer: 'an integer' };
  return names[type] ?? `a ${type}`;
}

/** Renders a value for `got ...`: scalars as written in JSON, collections by kind. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'a list';
  if (value !== null && typeof value === 'object') return 'a map';
  return String(value);
}

/** Renders a path as `models.writer.temperature`, `uses[2]`, or `args["a b"]`. */
export function renderPath(path: readonly string[]): string {
  let out = '';
  for (const step of path) {
    if (/^\d+$/.test(step)) out += `[${step}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(step)) out += out === '' ? step : `.${step}`;
    else out += `[${JSON.stringify(step)}]`;
  }
  return out;
}

function pointerToPath(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((step) => step.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function valueAt(data: unknown, path: readonly string[]): unknown {
  let current = data;
  for (const step of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}
