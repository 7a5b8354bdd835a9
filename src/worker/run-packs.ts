/**
 * The configured MCP Packs of one run: their tool lists are read once, when the run first
 * executes, and kept with the run (run-state.ts `packs`), so a resume or a replay offers
 * the same tools whatever the server lists later, and needs no round trip to start.
 */
import type { HostConfig } from '../host/host.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../host/configured-packs.ts';
import type { DeploymentConfig } from '../config/deployment-config.ts';
import type { ConfigVars } from '../host/mcp/mcp-pack.ts';
import { askIdOf } from './ask-broker.ts';
import { parsePromptCached } from './parsed-prompts.ts';
import type { RunState } from './run-state.ts';

/** Reads the tool lists of the configured MCP Packs the prompt declares, unless the run keeps them already. */
export async function prepareRunPacks(state: RunState, config: DeploymentConfig, vars: ConfigVars): Promise<void> {
  if (state.packSnapshots() !== null) return;
  const meta = state.meta()!;
  const parsed = parsePromptCached(state.source(), `${meta.prompt}.md`);
  const snapshots = parsed.ok ? await snapshotPacks(config, parsed.prompt, vars) : [];
  state.putPackSnapshots(snapshots);
}

/** `host` with the configured Packs the run was prepared with; their progress notifications become `tool_progress` events. */
export function withRunPacks(state: RunState, host: HostConfig, vars: ConfigVars): HostConfig {
  const snapshots = state.packSnapshots() ?? [];
  if (snapshots.length === 0) return host;
  const packs = snapshotPacksToPacks(snapshots, vars, (tool, context, step) => {
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
  return { ...host, packs: [...host.packs, ...packs] };
}
