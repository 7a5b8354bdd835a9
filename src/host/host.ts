/**
 * A Host: the Packs, services, models and operator a run is served with. `runOnHost`
 * prepares the run's catalog (refusing it with the requirements notice when a declared
 * Pack cannot serve) and runs the prompt with a Harness over the Host.
 */
import type { LuaPlatform } from '../engine/lua/vm.ts';
import { runPrompt, type RunOptions, type RunOutcome } from '../engine/run.ts';
import { prepareCatalog, type Remedies } from './catalog.ts';
import { createHarness, servicesOf, type ModelDelta } from './harness.ts';
import type { ModelDirectory } from '../models/provider.ts';
import type { Operator } from './operator.ts';
import type { Pack } from './pack.ts';
import type { CallLedger } from './tool-calls.ts';
import type { CallRounds } from './call-rounds.ts';
import type { Recording } from './recording.ts';
import { MemoryRunStore, type RunStore } from './run-store.ts';

/** What a Host serves runs with. */
export interface HostConfig {
  /** The Pack registry: every Pack the Host's Plugins added. */
  packs: Pack[];
  /** Services by name, such as `runvil/search-provider`. */
  services?: Record<string, unknown>;
  models: ModelDirectory;
  operator: Operator;
  clock?: () => number;
  /** Where calls to tools that answer later (HTTP tool services) wait for their results. */
  calls?: CallLedger;
  /** Where tool calls keep the rounds of a server that asks before it answers (call-rounds.ts); in memory for the run when absent. */
  rounds?: CallRounds;
  /** Catalog tool outputs answered before the Packs, in call order (a test file's `recorded:`). */
  recording?: Recording;
  /** What the requirements notice says to do about a declared Pack this Host cannot serve. */
  remedies?: Remedies;
}

/** One run on a Host: the Engine's run options, with the Host supplying the platform-side parts. */
export type HostRunOptions = Omit<RunOptions, 'platform' | 'harness' | 'catalog' | 'requirementsNotice'> & {
  /** The run's files; in memory when absent. */
  store?: RunStore;
  /** Told each model step's text as it arrives (harness.ts's ModelDelta); rounds stream only with it. */
  onModelDelta?: (delta: ModelDelta) => void;
};

/** Prepares and runs a prompt on a Host. */
export async function runOnHost(platform: LuaPlatform, host: HostConfig, hostOptions: HostRunOptions): Promise<RunOutcome> {
  const { onModelDelta, ...options } = hostOptions;
  const services = servicesOf(host.services);
  const prepared = prepareCatalog(options.prompt, host.packs, services, host.remedies);
  const runId = options.runId ?? 'run-1';
  const harness = createHarness({
    runId,
    store: options.store ?? new MemoryRunStore(),
    packs: prepared.ok ? prepared.packs : new Map(),
    services,
    operator: host.operator,
    models: host.models,
    ...(host.clock ? { clock: host.clock } : {}),
    ...(host.calls ? { calls: host.calls } : {}),
    ...(host.rounds ? { rounds: host.rounds } : {}),
    ...(host.recording ? { recording: host.recording } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(onModelDelta ? { onModelDelta } : {}),
  });
  try {
    return await runPrompt({
      ...options,
      runId,
      platform,
      harness,
      ...(prepared.ok ? { catalog: prepared.catalog } : { requirementsNotice: prepared.notice }),
    });
  } finally {
    // Connections a Pack kept for the run's next call (an MCP server's) close with the run.
    await Promise.all(host.packs.map((pack) => pack.dispose?.().catch(() => undefined)));
  }
}
