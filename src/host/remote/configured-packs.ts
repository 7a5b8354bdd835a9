/**
 * The configured Packs of a run (runvil.yaml's `packs`): preparing a run reads the tool
 * list of each MCP Pack the prompt declares (only those: an undeclared third-party Pack is
 * not in the run, so its server costs nothing), and the run keeps what it read, with the
 * Pack's configuration, as its `PackSnapshot`s: a resume or a replay builds the same Packs
 * from them, whatever the server or the file says later. Also what `GET /packs` reports.
 * The servers are reached over the transport a factory makes (mcp-client.ts): Streamable HTTP
 * unless a caller (a test with a server in its own process) gives another.
 *
 * Each MCP Pack's tool definitions are judged against its pin (mcp/tool-pins.ts) when a run
 * is prepared and when GET /packs reports them: a list that differs makes the Pack
 * unavailable, naming the tools that changed, until the root accepts it (`acceptPackTools`)
 * or runvil.yaml's `pin:` names the new digest. A run prepared earlier keeps its list.
 */
import type { ConfiguredPack, DeploymentConfig } from '../../config/deployment-config.ts';
import type { Prompt } from '../../prompt/types.ts';
import { streamableHttp, type McpTransportFactory } from './mcp/mcp-client.ts';
import { mcpEndpoint, mcpPack, mcpToolManifests, packIdOf, type ConfigVars, type ToolProgress } from './mcp/mcp-pack.ts';
import { definitionsOf, forgetMcpToolList, readMcpToolList, type McpToolList } from './mcp/mcp-tool-list.ts';
import { changedTools, judgePin, toolsChanged, type PinStore, type PinVerdict } from './mcp/tool-pins.ts';
import type { Pack, ToolContext } from '../pack.ts';

/** An MCP Pack as a run keeps it: its configuration as the file gave it (`${NAME}` unresolved) and its tool list. */
export interface PackSnapshot {
  fqName: string;
  description: string;
  trusted: boolean;
  /** Its server; `timeout_seconds`, runvil.yaml's `timeout:` (how long a call may wait on a task), when it gives one. */
  mcp: { url: string; headers: [string, string][]; timeout_seconds?: number };
  tools: McpToolList;
}

/**
 * Reads, for each MCP Pack of `config` that `prompt` declares, its tool list (from this
 * isolate's cache when fresh), judged against its pin (`pins` keeps the pins first seen; with
 * none, only runvil.yaml's `pin:` is judged). A Pack `kept` holds (a fork keeps the original
 * run's) is taken as kept, not read again.
 */
export async function snapshotPacks(
  config: DeploymentConfig,
  prompt: Prompt,
  vars: ConfigVars,
  kept: readonly PackSnapshot[] = [],
  transport: McpTransportFactory = streamableHttp,
  pins: PinStore | null = null,
): Promise<PackSnapshot[]> {
  const declared = new Set(prompt.frontmatter.uses.map((entry) => entry.fqName));
  const keptByName = new Map(kept.map((snapshot) => [snapshot.fqName, snapshot]));
  const chosen = [...config.packs.values()].filter((pack) => pack.source.kind === 'mcp' && declared.has(pack.fqName) && !keptByName.has(pack.fqName));
  const read = await Promise.all(chosen.map(async (pack) => ({ ...describe(pack), tools: (await pinnedToolList(pack, vars, transport, pins)).list })));
  return [...kept.filter((snapshot) => declared.has(snapshot.fqName)), ...read];
}

/** Called with each progress notification of a configured Pack's tool call. */
export type ProgressListener = (tool: string, context: ToolContext, progress: ToolProgress) => void;

/** The Packs a run's snapshots stand for; each has `dispose` (close its connections when the run ends). */
export function snapshotPacksToPacks(
  snapshots: readonly PackSnapshot[],
  vars: ConfigVars,
  onProgress?: ProgressListener,
  transport: McpTransportFactory = streamableHttp,
): (Pack & { dispose(): Promise<void> })[] {
  return snapshots.map((snapshot) =>
    mcpPack(
      {
        fqName: snapshot.fqName,
        description: snapshot.description,
        trusted: snapshot.trusted,
        source: {
          kind: 'mcp',
          url: snapshot.mcp.url,
          headers: new Map(snapshot.mcp.headers),
          ...(snapshot.mcp.timeout_seconds !== undefined ? { timeoutSeconds: snapshot.mcp.timeout_seconds } : {}),
        },
      },
      snapshot.tools,
      vars,
      onProgress,
      transport,
    ),
  );
}

/** One Pack as `GET /packs` reports it. */
export interface PackReport {
  name: string;
  id: string;
  description: string;
  /** `runvil` for the Host's own Packs, else how the configured Pack is served. */
  source: 'runvil' | 'mcp' | 'http';
  trusted: boolean | null;
  /** Whether the Pack can serve now; `reason` says why not. */
  available: boolean;
  reason: string | null;
  tools: { id: string; description: string; output: 'plain' | 'structured'; trusted: boolean }[];
  /** Tools the server lists that a run leaves out, with why (an MCP Pack only). */
  left_out?: { name: string; reason: string }[];
  /** Where the configured Pack is served, as runvil.yaml gives it (`${NAME}` not read). */
  url?: string;
  /**
   * An MCP Pack's pinned tool definitions: the digest of what its server lists now (the
   * value for runvil.yaml's `pin:`), the digest pinned (null before the first list), and the
   * tools that changed since (empty when none did).
   */
  pin?: { digest: string; pinned: string | null; changed: string[] };
}

/** What `GET /packs` says of each configured Pack now: an MCP Pack's tools read from its server (or this isolate's cache). */
export async function reportConfiguredPacks(
  config: DeploymentConfig,
  vars: ConfigVars,
  transport: McpTransportFactory = streamableHttp,
  pins: PinStore | null = null,
): Promise<PackReport[]> {
  return Promise.all(
    [...config.packs.values()].map(async (pack): Promise<PackReport> => {
      const base = { name: pack.fqName, id: packIdOf(pack.fqName), description: pack.description, trusted: pack.trusted, url: pack.source.url };
      if (pack.source.kind === 'mcp') {
        const { list, read, verdict } = await pinnedToolList(pack, vars, transport, pins);
        // A Pack whose tools changed shows what its server lists now, beside why it cannot serve.
        const tools = mcpToolManifests(pack, read).map(({ id, description, output, trusted }) => ({ id, description, output, trusted }));
        const pin = verdict ? { digest: verdict.digest, pinned: verdict.pinned, changed: verdict.ok ? [] : verdict.changed } : undefined;
        return {
          ...base,
          source: 'mcp',
          available: list.ok,
          reason: list.ok ? null : list.reason,
          tools,
          left_out: read.ok ? read.refused : [],
          ...(pin ? { pin } : {}),
        };
      }
      const missing = missingVariable([pack.source.url, pack.source.secret], vars);
      const tools = pack.source.tools.map((tool) => ({
        id: `${packIdOf(pack.fqName)}/${tool.name}`,
        description: tool.description,
        output: tool.output,
        trusted: pack.trusted,
      }));
      return { ...base, source: 'http', available: missing === null, reason: missing, tools };
    }),
  );
}

function describe(pack: ConfiguredPack): Omit<PackSnapshot, 'tools'> {
  if (pack.source.kind !== 'mcp') throw new Error(`${pack.fqName} is not an MCP Pack`);
  const timeout = pack.source.timeoutSeconds;
  return {
    fqName: pack.fqName,
    description: pack.description,
    trusted: pack.trusted,
    mcp: { url: pack.source.url, headers: [...pack.source.headers], ...(timeout !== undefined ? { timeout_seconds: timeout } : {}) },
  };
}

/** What accepting a Pack's tools as they are now did, or why it could not. */
export type AcceptOutcome =
  { ok: true; digest: string; tools: string[]; changed: string[] } | { ok: false; kind: 'NotFound' | 'Pinned' | 'Unavailable'; message: string };

/**
 * Accepts the tool definitions the server of configured MCP Pack `fqName` lists now (read
 * afresh, not from the cache) as its pin. A Pack runvil.yaml pins is not changed here: its
 * `pin:` is, to the digest the refusal names.
 */
export async function acceptPackTools(
  config: DeploymentConfig,
  fqName: string,
  vars: ConfigVars,
  pins: PinStore,
  transport: McpTransportFactory = streamableHttp,
): Promise<AcceptOutcome> {
  const pack = config.packs.get(fqName);
  if (!pack || pack.source.kind !== 'mcp') return { ok: false, kind: 'NotFound', message: `runvil.yaml configures no MCP Pack ${fqName}` };
  const endpoint = mcpEndpoint(pack.fqName, pack.source, vars);
  if (!endpoint.ok) return { ok: false, kind: 'Unavailable', message: `${fqName} cannot be read: ${endpoint.message}` };
  forgetMcpToolList(endpoint.endpoint);
  const list = await readMcpToolList(endpoint.endpoint, Date.now, undefined, transport);
  const seen = definitionsOf(list);
  if (!list.ok || seen === null)
    return { ok: false, kind: 'Unavailable', message: `${fqName} cannot be read: ${list.ok ? 'its tool list was not read' : list.reason}` };
  if (pack.source.pin !== undefined && pack.source.pin !== seen.digest) {
    return {
      ok: false,
      kind: 'Pinned',
      message: `runvil.yaml pins ${fqName}'s tools to ${pack.source.pin}; to accept what its server lists now, set its pin: to ${seen.digest}`,
    };
  }
  const before = await pins.get(fqName);
  await pins.put(fqName, seen);
  const changed = before && before.digest !== seen.digest ? changedTools(before.tools, seen.tools) : [];
  return { ok: true, digest: seen.digest, tools: Object.keys(seen.tools).sort(), changed };
}

/**
 * The tool list of MCP Pack `pack` as a run would take it (`list`: unavailable when its tools
 * changed since they were pinned), the list as read (`read`), and the pin's verdict (null
 * when nothing was judged: the server did not answer, or there is no pin and no store).
 */
async function pinnedToolList(
  pack: ConfiguredPack,
  vars: ConfigVars,
  transport: McpTransportFactory,
  pins: PinStore | null,
): Promise<{ list: McpToolList; read: McpToolList; verdict: PinVerdict | null }> {
  if (pack.source.kind !== 'mcp') throw new Error(`${pack.fqName} is not an MCP Pack`);
  const endpoint = mcpEndpoint(pack.fqName, pack.source, vars);
  // A missing ${NAME} is why the Pack cannot serve, named like any other reason.
  if (!endpoint.ok) {
    const failed: McpToolList = { ok: false, reason: endpoint.message };
    return { list: failed, read: failed, verdict: null };
  }
  const read = await readMcpToolList(endpoint.endpoint, Date.now, undefined, transport);
  const seen = definitionsOf(read);
  if (!read.ok || seen === null || (pins === null && pack.source.pin === undefined)) return { list: read, read, verdict: null };
  const verdict = await judgePin(pack.fqName, seen, pack.source.pin, pins);
  return { list: verdict.ok ? read : { ok: false, reason: toolsChanged(verdict.changed) }, read, verdict };
}

function missingVariable(texts: readonly string[], vars: ConfigVars): string | null {
  for (const text of texts) {
    const match = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
    for (const [, name] of text.matchAll(match)) {
      if (!Object.hasOwn(vars, name!) || vars[name!] === undefined) return `runvil.yaml needs the environment variable ${name}, which is not set`;
    }
  }
  return null;
}
