/**
 * `mcp.resources` of runvil.yaml: MCP resources backed by prompts. Each key is a URI, or a
 * URI template whose `{variables}` (RFC 6570 simple expansion, one path segment each) are
 * the prompt's args; reading the resource runs the prompt and its result is the content
 * (text, or `encoding: base64` for a binary one, served as a blob). The `runvil:` scheme is
 * the run files' own (runvil://runs/<id>/files/<path>) and cannot be declared.
 */
import { pathText } from './yaml-shape.ts';

/** One resource as written. */
export interface RawMcpResource {
  prompt?: string;
  name?: string;
  description?: string;
  mime_type?: string;
  encoding?: string;
}

/** A resource or resource template served by a prompt. */
export interface McpResource {
  /** The URI, or the URI template, as written. */
  uri: string;
  /** The deployed prompt whose result is the content. */
  prompt: string;
  /** The resource's name in `resources/list` (the prompt's name when not given). */
  name: string;
  description: string | null;
  mimeType: string;
  /** `base64`: the prompt's result is base64 text, served as the resource's `blob`. */
  encoding: 'text' | 'base64';
  /** The template's variables, in order; empty for a fixed URI. */
  variables: string[];
}

/** The longest value a template variable takes (decoded), in characters. */
export const MAX_VARIABLE_CHARS = 1024;
/** The most resources and templates `mcp.resources` declares. */
export const MAX_RESOURCES = 256;

/** A template variable's name (as RFC 6570's varname, without dots or percent-escapes). */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const PROMPT_NAME = /^[a-z0-9-]{1,64}$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const MIME_TYPE = /^[A-Za-z0-9!#$&^_.+-]{1,127}\/[A-Za-z0-9!#$&^_.+-]{1,127}$/;
const ENCODINGS: ReadonlySet<string> = new Set(['text', 'base64']);

/** Reads `mcp.resources`; each problem is reported at its place (`key` for a URI). */
export function readMcpResources(
  raw: Record<string, RawMcpResource>,
  report: (path: (string | number)[], message: string, key?: 'key') => void,
): McpResource[] {
  const resources: McpResource[] = [];
  const entries = Object.entries(raw);
  if (entries.length === 0) report(['mcp', 'resources'], '`mcp.resources` is empty: leave it out to serve only runs’ files as resources');
  if (entries.length > MAX_RESOURCES) report(['mcp', 'resources'], `\`mcp.resources\` declares ${entries.length} resources; at most ${MAX_RESOURCES}`);
  for (const [uri, entry] of entries) {
    const at = ['mcp', 'resources', uri];
    const where = `\`${pathText(at)}\``;
    const parsed = templateOf(uri);
    if ('problem' in parsed) {
      report(at, `${where}: ${parsed.problem}`, 'key');
      continue;
    }
    if (entry.prompt === undefined || !PROMPT_NAME.test(entry.prompt)) {
      report(at, `${where} needs \`prompt:\`, the name of the prompt whose result is the resource (lowercase letters, digits and '-')`);
      continue;
    }
    const mimeType = entry.mime_type ?? 'text/plain';
    if (!MIME_TYPE.test(mimeType)) {
      report([...at, 'mime_type'], `${where}: ${JSON.stringify(mimeType)} is not a media type (type/subtype, as text/plain)`);
      continue;
    }
    const encoding = entry.encoding ?? 'text';
    if (!ENCODINGS.has(encoding)) {
      report([...at, 'encoding'], `${where}: encoding ${JSON.stringify(encoding)} is neither text nor base64`);
      continue;
    }
    resources.push({
      uri,
      prompt: entry.prompt,
      name: entry.name ?? entry.prompt,
      description: entry.description ?? null,
      mimeType,
      encoding: encoding as McpResource['encoding'],
      variables: parsed.variables,
    });
  }
  return resources;
}

/** The variables of a URI or URI template, or what makes it neither. */
function templateOf(uri: string): { variables: string[] } | { problem: string } {
  const scheme = SCHEME.exec(uri);
  if (!scheme) return { problem: `${JSON.stringify(uri)} is not a URI (it needs a scheme, as test://name)` };
  if (scheme[1]!.toLowerCase() === 'runvil') return { problem: 'runvil: URIs are the runs’ files; declare resources under a scheme of your own' };
  if (/[\s<>"\\^`|]/.test(uri)) return { problem: `${JSON.stringify(uri)} holds a character a URI cannot` };
  const variables: string[] = [];
  const rest = uri.replace(/\{([^{}]*)\}/g, (_, name: string) => {
    variables.push(name);
    return '';
  });
  if (/[{}]/.test(rest)) return { problem: `${JSON.stringify(uri)} has an unbalanced { or }` };
  for (const name of variables) {
    if (!VARIABLE.test(name))
      return { problem: `{${name}} is not a template variable this deployment reads (a name of letters, digits and _: simple expansion only)` };
  }
  if (new Set(variables).size !== variables.length) return { problem: `${JSON.stringify(uri)} names a variable twice` };
  if (/\}\{/.test(uri)) return { problem: `${JSON.stringify(uri)} has two variables with nothing between them, so a URI cannot say where one ends` };
  return { variables };
}

/** A URI matched against the declared resources: the resource and its variables' values (the prompt's args). */
export interface ResourceMatch {
  resource: McpResource;
  args: { [name: string]: string };
}

/**
 * The declared resource `uri` names, with its variables' values, or null. A variable takes
 * one path segment (no `/`, `?`, `#`, `{` or `}`), percent-decoded; a dot segment (`.`, `..`, which a
 * URI's normalization would remove), an undecodable or empty value, or one past
 * MAX_VARIABLE_CHARS matches nothing.
 */
export function matchResource(resources: readonly McpResource[], uri: string): ResourceMatch | null {
  for (const resource of resources) {
    if (resource.variables.length === 0) {
      if (resource.uri === uri) return { resource, args: {} };
      continue;
    }
    const values = pattern(resource.uri).exec(uri);
    if (!values) continue;
    const args: { [name: string]: string } = Object.create(null) as { [name: string]: string };
    let fits = true;
    resource.variables.forEach((name, index) => {
      const value = decoded(values[index + 1]!);
      if (value === null) fits = false;
      else args[name] = value;
    });
    if (fits) return { resource, args };
  }
  return null;
}

function decoded(raw: string): string | null {
  if (raw === '.' || raw === '..' || raw.length > MAX_VARIABLE_CHARS * 3) return null;
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (value === '' || value === '.' || value === '..' || value.length > MAX_VARIABLE_CHARS) return null;
  return value;
}

const patterns = new Map<string, RegExp>();

/**
 * The template as an anchored pattern: literals as they are, each variable within one segment
 * and never holding the character that follows it in the template, so a URI matches in one
 * pass (no backtracking, whatever the caller sends).
 */
function pattern(template: string): RegExp {
  let compiled = patterns.get(template);
  if (!compiled) {
    const literals = template.split(/\{[^{}]*\}/);
    let source = '';
    literals.forEach((literal, index) => {
      source += escape(literal);
      const next = literals[index + 1];
      if (next === undefined) return;
      const stop = next === '' ? '' : /[A-Za-z0-9]/.test(next[0]!) ? next[0]! : `\\${next[0]!}`;
      source += `([^/?#{}${stop}]+)`;
    });
    compiled = new RegExp(`^${source}$`);
    patterns.set(template, compiled);
  }
  return compiled;
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
