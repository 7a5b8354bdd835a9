/**
 * A Host: the Packs, services, models and operator a run is served with. `runOnHost`
 * prepares the run's catalog (refusing it with the requirements notice when a declared
 * Pack cannot serve) and runs the prompt with a Harness over the Host.
 */
import type { Json, Prompt } from '../prompt/types.ts';
import type { JournalEntry } from '../engine/journal.ts';
import type { RunEvent } from '../engine/events.ts';
import type { RunLimits } from '../engine/budget.ts';
import type { LuaPlatform } from '../engine/lua/vm.ts';
import { runPrompt, type RunOutcome } from '../engine/run.ts';
import { prepareCatalog } from './catalog.ts';
import { createHarness, servicesOf, type ModelDirectory } from './harness.ts';
import type { Operator } from './operator.ts';
import type { Pack } from './pack.ts';
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
}

/** One run on a Host. */
export interface HostRunOptions {
  prompt: Prompt;
  args?: { [name: string]: Json };
  seed?: string;
  runId?: string;
  store?: RunStore;
  journal?: readonly JournalEntry[];
  onJournal?: (entry: JournalEntry) => void | Promise<void>;
  onEvent?: (event: RunEvent) => void;
  limits?: Partial<RunLimits>;
  signal?: AbortSignal;
}

/** Prepares and runs a prompt on a Host. */
export async function runOnHost(platform: LuaPlatform, host: HostConfig, options: HostRunOptions): Promise<RunOutcome> {
  const services = servicesOf(host.services);
  const prepared = prepareCatalog(options.prompt, host.packs, services);
  const runId = options.runId ?? 'run-1';
  const harness = createHarness({
    runId,
    store: options.store ?? new MemoryRunStore(),
    packs: prepared.ok ? prepared.packs : new Map(),
    services,
    operator: host.operator,
    models: host.models,
    ...(host.clock ? { clock: host.clock } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return runPrompt({
    ...options,
    runId,
    platform,
    harness,
    ...(prepared.ok ? { catalog: prepared.catalog } : { requirementsNotice: prepared.notice }),
  });
}
