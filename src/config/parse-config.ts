/**
 * Reading `runvil.yaml` (DESIGN.md Part 2, "The deployment's configuration"): the shape is
 * runvil-config-schema.json, checked by its generated validator (src/cli/yaml-shape.ts
 * places each problem at its line and column); the rules no schema states are checked
 * here: a Pack named `vendor/name`, exactly one of `mcp` and `http`, an `http` Pack's
 * `secret` and `tools`, secrets given as `${NAME}` (never in the file) and never the server's
 * own (server-secrets.ts), structured output on a trusted Pack only, URLs that are http(s)
 * (config-urls.ts; one made of `${NAME}` is checked when it is read), a Pack id that no
 * runvil Pack nor another configured Pack has; `triggers:` in trigger-config.ts, `mcp:` in mcp-config.ts. Platform-neutral: the Worker parses its
 * bundled copy with it, the command line and the build check files with it.
 */
import { parseShaped, pathText, type ShapeProblem } from './yaml-shape.ts';
import { parseName, parsePackId, DEFAULT_VENDOR } from '../prompt/name-grammar.ts';
import type { Json } from '../json/json.ts';
import {
  NOTIFICATION_TYPES,
  type ConfiguredPack,
  type ConfiguredTool,
  type DeploymentConfig,
  type NotificationType,
  type NotifyTarget,
  type Trigger,
} from './deployment-config.ts';
import { readTrigger, type RawTrigger } from './trigger-config.ts';
import { readMcpConfig, type RawMcpConfig } from './mcp-config.ts';
import validateConfig from './runvil-config-validator.generated.js';
import { parameterSchemaProblem } from '../json/parameter-schema-limits.ts';
import { HAS_REFERENCE, originProblem, urlProblem } from './config-urls.ts';
import { runvilPackWithId } from './runvil-pack-names.ts';
import { serverSecretProblem } from './server-secrets.ts';

/** A problem of the file, with its place (1-based line and column). */
export type ConfigProblem = ShapeProblem;

/** The outcome of reading a configuration file. */
export type ConfigOutcome = { ok: true; config: DeploymentConfig } | { ok: false; problems: ConfigProblem[] };

/** Seconds a call of an `http` Pack's tool may wait for its result when the file says nothing. */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 900;

/** A string that is exactly one `${NAME}` reference. */
const ONE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;
/** Every `${NAME}` reference of a string. */
const REFERENCES = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the MCP transport sets itself: a file cannot replace them. */
const TRANSPORT_HEADERS = new Set([
  'accept',
  'content-type',
  'content-length',
  'host',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'transfer-encoding',
  'connection',
]);
/** A prompt's name, as the frontmatter's `name` allows it. */
const PROMPT_NAME = /^[a-z0-9-]{1,64}$/;
/** A pinned digest of an MCP server's tool definitions (tool-pins.ts makes them). */
const PIN_DIGEST = /^sha256:[0-9a-f]{64}$/;

interface RawTool {
  name?: string;
  description?: string;
  parameters?: Json;
  output?: 'plain' | 'structured';
  timeout?: number;
}

interface RawPack {
  description?: string;
  mcp?: { url?: string; headers?: Record<string, string> };
  http?: { url?: string; secret?: string };
  trusted?: boolean;
  tools?: RawTool[];
  pin?: string;
  /** An MCP Pack's: how long a call its server makes a task may wait on it. */
  timeout?: number;
}

interface RawNotify {
  url?: string;
  secret?: string;
  events?: NotificationType[];
  prompts?: string[];
}

interface RawConfig {
  public_url?: string;
  packs?: Record<string, RawPack>;
  notify?: RawNotify[];
  triggers?: Record<string, RawTrigger>;
  mcp?: RawMcpConfig;
}

type Path = (string | number)[];
/** Records a problem at the value of `path`, or at its key when `key` is set. */
type Report = (path: Path, message: string, key?: 'key') => void;

/** Reads and checks the text of a `runvil.yaml`; an empty file is an empty configuration. */
export function parseDeploymentConfig(text: string): ConfigOutcome {
  if (text.trim() === '' || /^(\s*#[^\n]*\n?)*\s*$/.test(text))
    return { ok: true, config: { publicUrl: null, packs: new Map(), notify: [], triggers: new Map() } };
  const parsed = parseShaped(text, validateConfig, 'runvil.yaml');
  if (!parsed.ok) return parsed;
  const raw = parsed.value as RawConfig;
  const problems: ConfigProblem[] = [];
  const report: Report = (path, message, key) => problems.push({ message, ...(key ? parsed.placeKey(path) : parsed.place(path)) });

  let publicUrl: string | null = null;
  if (raw.public_url !== undefined) {
    publicUrl = raw.public_url;
    const problem = HAS_REFERENCE.test(raw.public_url) ? null : originProblem(raw.public_url);
    if (problem) report(['public_url'], `\`public_url\` ${problem}`);
    refuseServerSecrets(raw.public_url, ['public_url'], report);
  }
  const packs = new Map<string, ConfiguredPack>();
  const packIds = new Map<string, string>();
  for (const [name, pack] of Object.entries(raw.packs ?? {})) {
    const configured = readPack(name, pack, report);
    const taken = packNameProblem(name) === null && packIdTaken(name, packIds, report);
    if (configured && !taken) packs.set(name, configured);
  }
  const notify = (raw.notify ?? []).map((entry, index) => readNotify(entry, ['notify', index], report));
  const triggers = new Map<string, Trigger>();
  for (const [name, entry] of Object.entries(raw.triggers ?? {})) {
    const trigger = readTrigger(name, entry, parsed.placeKey(['triggers', name]), report);
    if (trigger) triggers.set(name, trigger);
  }
  const mcp = raw.mcp === undefined ? null : readMcpConfig(raw.mcp, report);
  if (problems.length > 0) return { ok: false, problems: problems.sort((a, b) => a.line - b.line || a.column - b.column) };
  return { ok: true, config: { publicUrl, packs, notify, triggers, ...(mcp ? { mcp } : {}) } };
}

/** Where the values of a runvil.yaml are written (1-based), by path, for checks made after the file's own. */
export interface ConfigPlaces {
  /** The place of the value at `path`. */
  place(path: (string | number)[]): { line: number; column: number };
  /** The place of the key at `path`. */
  placeKey(path: (string | number)[]): { line: number; column: number };
}

/** The places of a runvil.yaml's values (runvil check's check of triggers against prompts), or null when it does not fit the format. */
export function configPlaces(text: string): ConfigPlaces | null {
  const parsed = parseShaped(text, validateConfig, 'runvil.yaml');
  return parsed.ok ? { place: parsed.place, placeKey: parsed.placeKey } : null;
}

/** A problem as printed: `file:line:column: message`. */
export function formatConfigProblem(file: string, problem: ConfigProblem): string {
  return `${file}:${problem.line}:${problem.column}: ${problem.message}`;
}

function readPack(name: string, raw: RawPack, report: Report): ConfiguredPack | null {
  const at: Path = ['packs', name];
  const where = `\`${pathText(at)}\``;
  let ok = true;
  const nameProblem = packNameProblem(name);
  if (nameProblem) {
    report(at, `${where}: ${nameProblem}`, 'key');
    ok = false;
  }
  const trusted = raw.trusted ?? false;
  const description = raw.description ?? '';
  if (raw.mcp && raw.http) {
    report([...at, 'http'], `${where} has both \`mcp\` and \`http\`: a Pack is served by one MCP server or one HTTP tool service`);
    return null;
  }
  if (raw.pin !== undefined && !raw.mcp) {
    report(
      [...at, 'pin'],
      `\`${pathText([...at, 'pin'])}\`: \`pin\` fixes an MCP server's tool definitions; an http Pack's tools are the ones this file lists`,
    );
    ok = false;
  } else if (raw.pin !== undefined && !PIN_DIGEST.test(raw.pin)) {
    report(
      [...at, 'pin'],
      `\`${pathText([...at, 'pin'])}\`: a pin is the digest GET /packs shows for the Pack, sha256: and 64 hex digits, got ${JSON.stringify(raw.pin.length > 80 ? `${raw.pin.slice(0, 77)}...` : raw.pin)}`,
    );
    ok = false;
  }
  if (raw.timeout !== undefined && !raw.mcp) {
    report(
      [...at, 'timeout'],
      `\`${pathText([...at, 'timeout'])}\`: a Pack's \`timeout\` bounds an MCP server's tasks; an http Pack's tools each give their own \`timeout\``,
    );
    ok = false;
  }
  if (raw.mcp) {
    if (raw.tools !== undefined) {
      report([...at, 'tools'], `${where}: an MCP Pack's tools come from its server's tools/list; \`tools\` belongs to an \`http\` Pack`);
      ok = false;
    }
    const url = requiredUrl(raw.mcp.url, [...at, 'mcp'], report);
    const headers = new Map<string, string>();
    for (const [header, value] of Object.entries(raw.mcp.headers ?? {})) {
      const place = [...at, 'mcp', 'headers', header];
      if (!HEADER_NAME.test(header)) {
        report(place, `\`${pathText(place)}\`: ${JSON.stringify(header)} is not an HTTP header name`, 'key');
        ok = false;
      } else if (TRANSPORT_HEADERS.has(header.toLowerCase())) {
        report(place, `\`${pathText(place)}\`: the MCP transport sets ${header} itself`, 'key');
        ok = false;
      } else if ([...headers.keys()].some((known) => known.toLowerCase() === header.toLowerCase())) {
        report(place, `\`${pathText(place)}\`: header ${header} is given twice`, 'key');
        ok = false;
      } else {
        headers.set(header, value);
        if (refuseServerSecrets(value, place, report)) ok = false;
      }
    }
    if (url === null || !ok) return null;
    const bounds = { ...(raw.pin !== undefined ? { pin: raw.pin } : {}), ...(raw.timeout !== undefined ? { timeoutSeconds: raw.timeout } : {}) };
    return { fqName: name, description, trusted, source: { kind: 'mcp', url, headers, ...bounds } };
  }
  if (raw.http) {
    const url = requiredUrl(raw.http.url, [...at, 'http'], report);
    const secret = requiredSecret(raw.http.secret, [...at, 'http'], 'an http Pack signs every call with it', report);
    if (raw.tools === undefined || raw.tools.length === 0) {
      report(raw.tools === undefined ? at : [...at, 'tools'], `${where} needs \`tools\`: an http Pack lists the tools its service performs`);
      ok = false;
    }
    const tools: ConfiguredTool[] = [];
    const seen = new Set<string>();
    (raw.tools ?? []).forEach((tool, index) => {
      const configured = readTool(tool, [...at, 'tools', index], trusted, report);
      if (!configured) return void (ok = false);
      if (seen.has(configured.name)) {
        report([...at, 'tools', index, 'name'], `\`${pathText([...at, 'tools', index, 'name'])}\`: ${configured.name} is listed twice`);
        ok = false;
      }
      seen.add(configured.name);
      tools.push(configured);
    });
    if (url === null || secret === null || !ok) return null;
    return { fqName: name, description, trusted, source: { kind: 'http', url, secret, tools } };
  }
  report(at, `${where} needs \`mcp\` (an MCP server) or \`http\` (an HTTP tool service)`);
  return null;
}

function readTool(raw: RawTool, at: Path, trusted: boolean, report: Report): ConfiguredTool | null {
  let ok = true;
  if (raw.name === undefined) {
    report(at, `\`${pathText(at)}\` needs a \`name\``);
    return null;
  }
  const name = parsePackId(raw.name);
  if (!name.ok) {
    report([...at, 'name'], `\`${pathText([...at, 'name'])}\`: ${JSON.stringify(raw.name)} is not a tool name: ${name.reason}`);
    ok = false;
  }
  const output = raw.output ?? 'plain';
  if (output === 'structured' && !trusted) {
    report(
      [...at, 'output'],
      `\`${pathText([...at, 'output'])}\`: structured output is for a trusted Pack's tools (add \`trusted: true\` to the Pack, or use plain)`,
    );
    ok = false;
  }
  // The bounds every tool's parameter schema has, and patterns RE2 can match (src/json/parameter-schema-limits.ts).
  const schemaProblem = raw.parameters === undefined ? null : parameterSchemaProblem(raw.parameters);
  if (schemaProblem !== null) {
    report([...at, 'parameters'], `\`${pathText([...at, 'parameters'])}\` ${schemaProblem}`);
    ok = false;
  }
  if (!ok) return null;
  return {
    name: raw.name,
    description: raw.description ?? '',
    parameters: raw.parameters ?? { type: 'object', properties: {} },
    output,
    timeoutSeconds: raw.timeout ?? DEFAULT_TOOL_TIMEOUT_SECONDS,
  };
}

function readNotify(raw: RawNotify, at: Path, report: Report): NotifyTarget {
  requiredUrl(raw.url, at, report);
  requiredSecret(raw.secret, at, 'every delivery is signed with it', report);
  const events = new Set<NotificationType>(raw.events ?? NOTIFICATION_TYPES);
  if (raw.events !== undefined && raw.events.length === 0)
    report([...at, 'events'], `\`${pathText([...at, 'events'])}\` is empty: leave it out to send every event type`);
  let prompts: Set<string> | null = null;
  if (raw.prompts !== undefined) {
    prompts = new Set();
    raw.prompts.forEach((prompt, index) => {
      if (!PROMPT_NAME.test(prompt))
        report(
          [...at, 'prompts', index],
          `\`${pathText([...at, 'prompts', index])}\`: ${JSON.stringify(prompt)} is not a prompt name (lowercase letters, digits and '-')`,
        );
      prompts!.add(prompt);
    });
    if (raw.prompts.length === 0) report([...at, 'prompts'], `\`${pathText([...at, 'prompts'])}\` is empty: leave it out to report every prompt's runs`);
  }
  return { url: raw.url ?? '', secret: raw.secret ?? '', events, prompts };
}

/** Why a Pack's key is not a configured Pack's name, or null. */
function packNameProblem(name: string): string | null {
  const parsed = parseName(name);
  if (!parsed.ok) return `a Pack is named vendor/name, such as acme/deploy: ${parsed.reason}`;
  if (parsed.segments.length !== 2) return `a Pack is named vendor/name, such as acme/deploy, with exactly one '/'`;
  if (parsed.segments[0] === DEFAULT_VENDOR)
    return `the vendor ${DEFAULT_VENDOR} is Runvil's own Packs'; name a configured Pack with your own vendor, such as acme/${parsed.segments[1]}`;
  return null;
}

/** A URL the file writes out is checked now; one with `${NAME}` when it is used (config-urls.ts resolveConfigUrl). */
function requiredUrl(url: string | undefined, at: Path, report: Report): string | null {
  if (url === undefined) {
    report(at, `\`${pathText(at)}\` needs a \`url\``);
    return null;
  }
  const problem = HAS_REFERENCE.test(url) ? null : urlProblem(url);
  if (problem) {
    report([...at, 'url'], `\`${pathText([...at, 'url'])}\` ${problem}`);
    return null;
  }
  return refuseServerSecrets(url, [...at, 'url'], report) ? null : url;
}

/** Reports each `${NAME}` of `text` that names one of the server's own secrets; true when one did. */
function refuseServerSecrets(text: string, at: Path, report: Report): boolean {
  let refused = false;
  for (const [, name] of text.matchAll(REFERENCES)) {
    const problem = serverSecretProblem(name!);
    if (problem === null) continue;
    report(at, `\`${pathText(at)}\`: ${problem}`);
    refused = true;
  }
  return refused;
}

/**
 * Reports a configured Pack whose Pack id (the name after the vendor) a runvil Pack or an
 * earlier configured Pack has: a prompt's `uses:` and its tool ids name Packs by id, so
 * `evil/web` would pass for runvil/web. True when it is taken; `ids` holds the ids seen.
 */
function packIdTaken(name: string, ids: Map<string, string>, report: Report): boolean {
  const packId = name.slice(name.indexOf('/') + 1);
  const holder = runvilPackWithId(packId) ?? ids.get(packId) ?? null;
  if (holder === null) {
    ids.set(packId, name);
    return false;
  }
  const whose = holder.startsWith('runvil/') ? 'a runvil Pack' : 'another configured Pack';
  report(
    ['packs', name],
    `\`${pathText(['packs', name])}\`: its Pack id ${packId} is ${holder}'s, ${whose}; a configured Pack may not take a Pack id already taken (rename ${name}, such as ${name}-tools)`,
    'key',
  );
  return true;
}

function requiredSecret(secret: string | undefined, at: Path, why: string, report: Report): string | null {
  if (secret === undefined) {
    report(at, `\`${pathText(at)}\` needs a \`secret\` (\${NAME} of a whsec_... secret): ${why}`);
    return null;
  }
  if (!ONE_REFERENCE.test(secret)) {
    report(
      [...at, 'secret'],
      `\`${pathText([...at, 'secret'])}\` must name an environment variable, such as \${ACME_SECRET}: secrets never live in runvil.yaml`,
    );
    return null;
  }
  return refuseServerSecrets(secret, [...at, 'secret'], report) ? null : secret;
}
