/**
 * The configured MCP Packs of one run: their tool lists are read once, when the run first
 * executes, and kept with the run (run-state.ts `packs`), so a resume or a replay offers
 * the same tools whatever the server lists later, and needs no round trip to start. A
 * fork starts with the original's, and a run's test file describes them (run-replays.ts).
 */
import type { HostConfig } from '../../host/host.ts';
import { snapshotPacks, snapshotPacksToPacks, type PackSnapshot, type ProgressListener } from '../../host/remote/configured-packs.ts';
import type { DeploymentConfig } from '../../config/deployment-config.ts';
import type { ConfigVars } from '../../host/remote/mcp/mcp-pack.ts';
import { keyValuePinStore } from '../../host/remote/mcp/tool-pins.ts';
import type { KvNamespace } from '../platform-types.ts';
import { askIdOf } from '../waits/ask-broker.ts';
import { parsePromptCached } from '../deployment/parsed-prompts.ts';
import { packDigests } from '../deployment/deployment-build.ts';
import type { RunState } from './run-state.ts';

/**
 * Reads the tool lists of the configured MCP Packs the prompt declares, unless the run keeps
 * them already; each judged against its pin (`pins`: the deployment's, in KV), so a Pack
 * whose tools changed is unavailable to the run.
 */
export async function prepareRunPacks(state: RunState, config: DeploymentConfig, vars: ConfigVars, kv?: KvNamespace): Promise<void> {
  const pins = kv ? keyValuePinStore(kv) : null;
  if (state.packSnapshots() !== null) return;
  const meta = state.meta()!;
  const parsed = parsePromptCached(state.source(), `${meta.prompt}.md`);
  const snapshots = parsed.ok ? await snapshotPacks(config, parsed.prompt, vars, [], undefined, pins) : [];
  state.putPackSnapshots(snapshots, await packDigests(snapshots));
}

/**
 * The configured Packs a fork of a run is prepared with: the original's as it kept them
 * (their tool lists, not what the servers list now), and a fresh read of any other MCP Pack
 * the fork's source declares, judged against its pin as a new run's is (a server whose tools
 * changed refuses the fork as it refuses a new run). Null when the original was never
 * prepared: the fork prepares itself, as a new run does.
 */
export async function forkPackSnapshots(
  kept: readonly PackSnapshot[] | null,
  fork: { prompt: string; source: string },
  config: DeploymentConfig,
  vars: ConfigVars,
  kv?: KvNamespace,
): Promise<PackSnapshot[] | null> {
  if (kept === null) return null;
  const parsed = parsePromptCached(fork.source, `${fork.prompt}.md`);
  return parsed.ok ? snapshotPacks(config, parsed.prompt, vars, kept, undefined, kv ? keyValuePinStore(kv) : null) : [...kept];
}

/** `host` with the Packs `snapshots` stand for (a fork's check and a run's test file read their manifests, and call nothing). */
export function withPackSnapshots(host: HostConfig, snapshots: readonly PackSnapshot[], vars: ConfigVars, onProgress?: ProgressListener): HostConfig {
  if (snapshots.length === 0) return host;
  return { ...host, packs: [...host.packs, ...snapshotPacksToPacks(snapshots, vars, onProgress)] };
}

/** `host` with the configured Packs the run was prepared with; their progress notifications become `tool_progress` events. */
export function withRunPacks(state: RunState, host: HostConfig, vars: ConfigVars): HostConfig {
  return withPackSnapshots(host, state.packSnapshots() ?? [], vars, (tool, context, step) => {
    state.appendEvent({
      type: 'tool_progress',
      section: null,
      task: context.effect?.chain ?? '0',
      turn: 0,
      tool,
      call: context.effect ? askIdOf(context.effect) : null,
      progress: step.progress,
      total: step.total ?? null,
      message: step.message ?? null,
    });
  });
}
