/**
 * The frontmatter: the leading `---` block, parsed as YAML, checked against the schema in
 * frontmatter-schema.json (through the ajv validator generated from it, since workerd
 * cannot compile one at run time), then against the rules a schema cannot state: the name
 * grammar of `uses:` entries and repeated Pack ids, and args' `schema:` (arg-schema.ts).
 */
import { LineCounter, parseDocument, type Document } from 'yaml';
import validate from './frontmatter-validator.generated.js';
import { describeSchemaError, type ShapeIssue } from './frontmatter-messages.ts';
import { argSchemaProblem, argValueProblem, clashingDefinition } from './arg-schema.ts';
import { checkUsesEntries } from './uses-entries.ts';
import { findNodeOffsets } from './yaml-nodes.ts';
import type { ArgSpec, ArgType, Frontmatter, ModelConfig, PromptError, UsesEntry } from './types.ts';
import type { Json } from '../json/json.ts';

/** The prefix of every frontmatter message. */
export const FRONTMATTER_PREFIX = 'invalid frontmatter: ';

/**
 * Where the frontmatter block sits among a file's lines (1-based line numbers). `bodyLine`
 * is where the Markdown body starts; undefined when an unclosed block swallowed the file.
 */
export type FrontmatterBlock =
  { ok: true; yaml: string; yamlLine: number; bodyLine: number } | { ok: false; message: string; line: number; column: number; bodyLine: number | undefined };

const DELIMITER = /^---[ \t]*$/;

/** Finds the `---` ... `---` block that must open the file. */
export function splitFrontmatter(lines: readonly string[]): FrontmatterBlock {
  if (lines.length === 0 || !DELIMITER.test(lines[0] ?? '')) {
    const message = `${FRONTMATTER_PREFIX}the file must start with a \`---\` line that opens the frontmatter`;
    // The body may still be read from line 1, so its own errors are reported too.
    return { ok: false, message, line: 1, column: 1, bodyLine: 1 };
  }
  const close = lines.findIndex((line, index) => index > 0 && DELIMITER.test(line));
  if (close === -1) {
    const message = `${FRONTMATTER_PREFIX}the frontmatter opened by \`---\` on line 1 has no closing \`---\` line`;
    return { ok: false, message, line: 1, column: 1, bodyLine: undefined };
  }
  return { ok: true, yaml: lines.slice(1, close).join('\n'), yamlLine: 2, bodyLine: close + 2 };
}

/** The outcome of reading the frontmatter. */
export type FrontmatterResult = { ok: true; frontmatter: Frontmatter } | { ok: false; errors: PromptError[] };

/** Parses and checks the frontmatter's YAML text, which starts on file line `yamlLine`. */
export function parseFrontmatter(yaml: string, file: string, yamlLine: number): FrontmatterResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(yaml, { lineCounter, prettyErrors: false, schema: 'core' });
  const error = (message: string, offset?: number): PromptError => {
    const located: PromptError = { kind: 'Frontmatter', message: FRONTMATTER_PREFIX + message, file };
    if (offset === undefined) return located;
    const { line, col } = lineCounter.linePos(offset);
    return { ...located, line: line + yamlLine - 1, column: col };
  };

  if (doc.errors.length > 0) return { ok: false, errors: doc.errors.map((e) => error(e.message, e.pos[0])) };
  let data: unknown;
  try {
    // An empty block reads as an empty map, so it reports the missing keys.
    data = doc.contents === null ? {} : doc.toJS({ maxAliasCount: 100 });
  } catch (thrown) {
    return { ok: false, errors: [error(thrown instanceof Error ? thrown.message : String(thrown))] };
  }

  const errors: PromptError[] = [];
  if (!validate(data)) {
    for (const ajvError of validate.errors ?? []) {
      const issue = describeSchemaError(ajvError, data);
      if (issue) errors.push(error(issue.message, offsetOf(doc, issue)));
    }
  }
  const record = isRecord(data) ? data : {};
  const usesList = Array.isArray(record.uses) ? (record.uses as unknown[]) : [];
  const uses = checkUsesEntries(usesList);
  for (const issue of uses.issues) {
    const offset = issue.index === undefined ? undefined : findNodeOffsets(doc, ['uses', String(issue.index)]).value;
    errors.push(error(issue.message, offset));
  }
  for (const issue of argSchemaIssues(record)) errors.push(error(issue.message, findNodeOffsets(doc, issue.path).value));
  if (errors.length > 0) return { ok: false, errors: inFileOrder(errors) };

  const entries: UsesEntry[] = uses.entries.map(({ index, ...entry }) => {
    const offset = findNodeOffsets(doc, ['uses', String(index)]).value ?? 0;
    const { line, col } = lineCounter.linePos(offset);
    return { ...entry, line: line + yamlLine - 1, column: col };
  });
  return { ok: true, frontmatter: buildFrontmatter(record, entries) };
}

function offsetOf(doc: Document, issue: ShapeIssue): number | undefined {
  if (issue.at === 'none') return undefined;
  const offsets = findNodeOffsets(doc, issue.path);
  return issue.at === 'key' ? (offsets.key ?? offsets.value) : (offsets.value ?? offsets.key);
}

/** Positioned errors in file order, then the ones without a position, each group stable. */
function inFileOrder(errors: PromptError[]): PromptError[] {
  const rank = (e: PromptError) => (e.line === undefined ? Infinity : e.line * 1e6 + (e.column ?? 0));
  return errors
    .map((e, i) => ({ e, i }))
    .sort((a, b) => rank(a.e) - rank(b.e) || a.i - b.i)
    .map(({ e }) => e);
}

/** Builds the typed frontmatter from data the schema has accepted. */
function buildFrontmatter(data: Record<string, unknown>, uses: UsesEntry[]): Frontmatter {
  // Null-prototype maps, so a lookup of an undeclared role such as `toString` finds nothing.
  const models: Record<string, ModelConfig> = Object.create(null);
  for (const [role, config] of Object.entries(isRecord(data.models) ? data.models : {})) {
    models[role] = { ...(config as ModelConfig) };
  }
  const args: Record<string, ArgSpec> = Object.create(null);
  for (const [name, spec] of Object.entries(isRecord(data.args) ? data.args : {})) {
    args[name] = typeof spec === 'string' ? { type: spec as ArgType } : toArgSpec(spec as Record<string, unknown>);
  }
  return {
    name: data.name as string,
    description: data.description as string,
    runvil: 0,
    uses,
    models,
    args,
  };
}

function toArgSpec(spec: Record<string, unknown>): ArgSpec {
  const out: ArgSpec = { type: spec.type as ArgType };
  if ('default' in spec) out.default = spec.default as Json;
  if (typeof spec.description === 'string') out.description = spec.description;
  if (isRecord(spec.schema)) out.schema = spec.schema as Json;
  return out;
}

/**
 * The rules of args' `schema:` a schema of the frontmatter cannot state (arg-schema.ts): only
 * a `json` arg takes one, it is a bounded JSON Schema 2020-12, its default fits it, and two
 * args' schemas do not define one `$defs` name two ways.
 */
function argSchemaIssues(data: Record<string, unknown>): { message: string; path: string[] }[] {
  const issues: { message: string; path: string[] }[] = [];
  const schemas: { arg: string; schema: Json }[] = [];
  for (const [name, spec] of Object.entries(isRecord(data.args) ? data.args : {})) {
    if (!isRecord(spec) || !('schema' in spec)) continue;
    const path = ['args', name, 'schema'];
    if (spec.type !== 'json') {
      issues.push({ message: `\`args.${name}.schema\`: only a json arg takes a schema (this one is ${String(spec.type)})`, path });
      continue;
    }
    const problem = argSchemaProblem(spec.schema as Json);
    if (problem !== null) {
      issues.push({ message: `\`args.${name}.schema\` ${problem}`, path });
      continue;
    }
    if ('default' in spec) {
      const misfit = argValueProblem(spec.schema as Json, spec.default as Json);
      if (misfit !== null) issues.push({ message: `\`args.${name}.default\` ${misfit}`, path: ['args', name, 'default'] });
    }
    schemas.push({ arg: name, schema: spec.schema as Json });
  }
  const clash = clashingDefinition(schemas);
  if (clash !== null) {
    issues.push({
      message: `\`args.${clash.args[1]}.schema\` defines $defs.${clash.name}, which \`args.${clash.args[0]}.schema\` defines otherwise: a tool's input schema has one $defs, so give one of them another name`,
      path: ['args', clash.args[1], 'schema'],
    });
  }
  return issues;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
