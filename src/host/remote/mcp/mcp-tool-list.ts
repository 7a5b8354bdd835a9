/**
 * An MCP Pack's tool list: read from the server's `tools/list` (every page) when a run is
 * prepared, then kept with the run, so that a resume or a replay uses the list the run
 * started with whatever the server lists later. Tool names the chapter's name grammar
 * refuses are left out and said so (GET /packs shows them), as is a tool whose parameter
 * schema passes the bounds of parameter-schema-limits.ts. The read itself is bounded
 * (mcp-list-read.ts). A short per-isolate cache spares a run's start the round trips when
 * the list was read moments ago, a briefer one spares a failing server being read again by
 * every request, and readers of the same server at the same moment share one read.
 */
import { parsePackId } from '../../../prompt/name-grammar.ts';
import type { Json } from '../../../json/json.ts';
import { parameterSchemaProblem } from '../../../json/parameter-schema-limits.ts';
import { streamableHttp, type McpEndpoint, type McpTransportFactory } from './mcp-client.ts';
import { readToolPages, TOOL_LIST_BOUNDS, type ToolListBounds } from './mcp-list-read.ts';
import { toolDefinitions, type ToolDefinitions } from './tool-pins.ts';

/** One tool as the run keeps it. */
export interface McpToolSpec {
  name: string;
  description: string;
  /** The tool's JSON Schema of its arguments, as the server gave it. */
  parameters: Json;
  /** True when the server gave an `outputSchema` (a structured tool on a trusted Pack). */
  outputSchema: boolean;
}

/** A Pack's tools as read at prepare, or why the server could not give them. */
export type McpToolList = { ok: true; tools: McpToolSpec[]; refused: { name: string; reason: string }[] } | { ok: false; reason: string };

/** How long a tool list read from a server is reused by the runs this isolate starts. */
export const MCP_TOOL_LIST_TTL_MS = 30_000;
/** How long a server's failure to give its list is the answer, before it is read again. */
export const MCP_TOOL_LIST_FAILURE_TTL_MS = 5_000;
/** A server listing more tools than this has the rest left out (each would be offered to a model). */
export const MAX_MCP_TOOLS = 256;
/** A tool whose description and schemas take more characters than this is left out. */
export const MAX_MCP_TOOL_CHARS = 64 * 1024;

/** The message of a server that cannot be reached, with its short reason. */
export const didNotAnswer = (reason: string): string => `the MCP server did not answer (${reason})`;

const cache = new Map<string, { until: number; list: McpToolList }>();
/** The digests of the definitions each list read from a server was made from (tool-pins.ts); a run's kept list has none. */
const listed = new WeakMap<McpToolList, ToolDefinitions>();

/** The digests of the tool definitions the server listed when `list` was read, or null for a list not read here (a run's kept list). */
export function definitionsOf(list: McpToolList): ToolDefinitions | null {
  return listed.get(list) ?? null;
}
/** The reads under way, by server: a reader that comes meanwhile waits for the same one. */
const reading = new Map<string, Promise<McpToolList>>();
/** Counts the clears, so a read begun before one does not fill the cache after it. */
let generation = 0;

/** Forgets every cached tool list (tests, and a configuration replaced at run time). */
export function clearMcpToolListCache(): void {
  cache.clear();
  reading.clear();
  generation++;
}

/**
 * The tools of the server at `endpoint`: from this isolate's cache when read within
 * MCP_TOOL_LIST_TTL_MS (a failure within MCP_TOOL_LIST_FAILURE_TTL_MS), from the read under
 * way when there is one, else from the server, within `bounds`, over the transport
 * `transport` makes.
 */
export async function readMcpToolList(
  endpoint: McpEndpoint,
  now: () => number = Date.now,
  bounds: ToolListBounds = TOOL_LIST_BOUNDS,
  transport: McpTransportFactory = streamableHttp,
): Promise<McpToolList> {
  const key = cacheKey(endpoint);
  const hit = cache.get(key);
  if (hit && hit.until > now()) return hit.list;
  const under = reading.get(key);
  // A joining reader keeps its own deadline: the read it joins belongs to another request,
  // which workerd may cancel with its timers before it settles.
  if (under) return withinDeadline(under, bounds.deadlineMs);
  const started = generation;
  const read = readToolPages(endpoint, bounds, transport).then(async (pages): Promise<McpToolList> => {
    const list: McpToolList = pages.ok ? toolList(pages.tools) : { ok: false, reason: didNotAnswer(pages.reason) };
    // Every tool the server listed, the ones a run leaves out too: a change to any is a change.
    if (pages.ok) listed.set(list, await toolDefinitions(pages.tools));
    if (generation === started) {
      cache.set(key, { until: now() + (list.ok ? MCP_TOOL_LIST_TTL_MS : MCP_TOOL_LIST_FAILURE_TTL_MS), list });
      reading.delete(key);
    }
    return list;
  });
  reading.set(key, read);
  return read;
}

/** Forgets the cached list of the server at `endpoint`, so the next read asks the server (accepting a change reads what it lists now). */
export function forgetMcpToolList(endpoint: McpEndpoint): void {
  cache.delete(cacheKey(endpoint));
}

const cacheKey = (endpoint: McpEndpoint): string => JSON.stringify([endpoint.url, Object.entries(endpoint.headers).sort()]);

/** `list`, or the deadline's failure if it has not settled within `ms`. */
function withinDeadline(list: Promise<McpToolList>, ms: number): Promise<McpToolList> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<McpToolList>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: didNotAnswer(`its tool list took longer than ${ms / 1000} s`) }), ms);
  });
  return Promise.race([list, late]).finally(() => clearTimeout(timer));
}

/** Keeps the tools whose names the name grammar takes, and says why each other one was left out. */
export function toolList(tools: readonly { name: string; description?: string; inputSchema?: unknown; outputSchema?: unknown }[]): McpToolList {
  const kept: McpToolSpec[] = [];
  const refused: { name: string; reason: string }[] = [];
  const names = new Set<string>();
  for (const tool of tools) {
    const name = typeof tool.name === 'string' ? tool.name : String(tool.name);
    const parsed = parsePackId(name);
    const schemaProblem = isObject(tool.inputSchema) ? parameterSchemaProblem(tool.inputSchema) : null;
    if (!parsed.ok) refused.push({ name, reason: `not a tool name: ${parsed.reason}` });
    else if (names.has(name)) refused.push({ name, reason: 'listed twice by the server' });
    else if (kept.length >= MAX_MCP_TOOLS) refused.push({ name, reason: `the server lists more than ${MAX_MCP_TOOLS} tools` });
    else if (!isObject(tool.inputSchema)) refused.push({ name, reason: 'its inputSchema is not a JSON object' });
    else if (schemaProblem !== null) refused.push({ name, reason: `its inputSchema ${schemaProblem}` });
    else if (JSON.stringify([tool.description ?? '', tool.inputSchema]).length > MAX_MCP_TOOL_CHARS) {
      refused.push({ name, reason: `its description and schema are longer than ${MAX_MCP_TOOL_CHARS} characters` });
    } else {
      names.add(name);
      kept.push({
        name,
        description: typeof tool.description === 'string' ? tool.description : '',
        parameters: withoutMetaSchema(tool.inputSchema),
        outputSchema: isObject(tool.outputSchema),
      });
    }
  }
  return { ok: true, tools: kept, refused };
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema without `$schema`: the draft it names is not one every model provider takes. */
function withoutMetaSchema(schema: Record<string, Json>): Json {
  const copy: Record<string, Json> = Object.create(null);
  for (const [key, value] of Object.entries(schema)) if (key !== '$schema') copy[key] = value;
  return { ...copy };
}
