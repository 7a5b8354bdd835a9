/**
 * The Harness: performs every effect the Engine asks for, with the run's store, its Packs,
 * its operator and its models.
 */
import type { ModelConfig } from '../prompt/types.ts';
import type { Json } from '../json/json.ts';
import { answered, failed, type EffectAnswer, type EffectContext, type EffectRequest, type Harness } from '../engine/effects.ts';
import type { DeltaListener, ModelDirectory, ModelProvider, ModelRequest } from '../models/provider.ts';
import type { Operator } from './operator.ts';
import type { Pack, ServiceDirectory } from './pack.ts';
import type { Recording } from './recording.ts';
import type { RunStore } from './run-store.ts';
import type { CallLedger } from './tool-calls.ts';
import { MemoryCallRounds, type CallRounds } from './call-rounds.ts';
import { checkToolArguments } from './tool-arguments.ts';
import { capOutput } from './tool-output-cap.ts';

/** What one run's Harness works with. */
export interface HarnessOptions {
  runId: string;
  store: RunStore;
  /** The run's Packs by Pack id (from prepareCatalog). */
  packs: Map<string, Pack>;
  services: ServiceDirectory;
  operator: Operator;
  models: ModelDirectory;
  clock?: () => number;
  signal?: AbortSignal;
  /** Where calls to tools that answer later wait for their results. */
  calls?: CallLedger;
  /** Where tool calls keep the rounds of a server that asks before it answers; in memory for the run when absent. */
  rounds?: CallRounds;
  /** Catalog tool outputs to answer from before the Packs (a test file's `recorded:`). */
  recording?: Recording;
  /** Told a model step's text as it arrives; with it, the providers that can stream do. */
  onModelDelta?: (delta: ModelDelta) => void;
}

/**
 * A piece of a model step's text as it arrives: `step` is the seq of the round's
 * `model_turn_started` event, `task` the chain whose round it is. A side channel of the
 * round's effect, never journaled: a replay answers the round from the journal and makes
 * none. `restart: true` (with text '') says the provider sent the round again after part of
 * its text had arrived: the step's text so far is void (provider.ts's ReplyDelta).
 */
export interface ModelDelta {
  type: 'model_delta';
  step: number;
  task: string;
  text: string;
  restart?: true;
}

/** Builds the Harness of one run. */
export function createHarness(options: HarnessOptions): Harness {
  const { store } = options;
  const rounds = options.rounds ?? new MemoryCallRounds();
  return {
    async perform(request: EffectRequest, effect: EffectContext): Promise<EffectAnswer> {
      switch (request.op) {
        case 'store.read': {
          const text = await store.read(request.path);
          return text === null ? failed('store', `store.read: no file at ${request.path}`) : answered(text);
        }
        case 'store.write':
          await store.write(request.path, request.text);
          return answered(null);
        case 'store.append':
          await store.append(request.path, request.text);
          return answered(null);
        case 'store.list':
          return answered(await store.list(request.prefix));
        case 'store.delete':
          return answered(await store.delete(request.path));
        case 'sys.now':
          return options.recording?.now(effect.chain) ?? answered((options.clock ?? Date.now)());
        case 'tool.call':
          return (
            options.recording?.answer(effect.chain, request) ?? callTool(options, rounds, request.tool, request.args, { chain: effect.chain, seq: effect.seq })
          );
        case 'model.round':
          return (
            options.recording?.reply(effect.chain) ?? modelRound(options, request.role, request.request, deltaListener(options, request.step, effect.chain))
          );
      }
    },
  };
}

async function callTool(options: HarnessOptions, rounds: CallRounds, tool: string, args: Json, effect: { chain: string; seq: number }): Promise<EffectAnswer> {
  const pack = options.packs.get(tool.split('/')[0]!);
  if (!pack) return failed('tool', `${tool}: no Pack serves this tool in this run`);
  // Arguments that do not fit the tool's JSON Schema fail the call before the Pack sees it.
  const manifest = pack.manifest.tools.find((entry) => entry.id === tool);
  const mismatch = manifest ? checkToolArguments(manifest, args ?? {}) : null;
  if (mismatch !== null) return failed('tool', mismatch);
  const context = {
    runId: options.runId,
    store: options.store,
    operator: options.operator,
    services: options.services,
    effect,
    rounds,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.calls ? { calls: options.calls } : {}),
  };
  try {
    // Measured before the journal or a VM sees it, whichever Pack answered.
    const outcome = capOutput(await pack.call(tool, (args ?? {}) as { [key: string]: Json }, context), pack.manifest.fqName, tool);
    if (outcome.ok) return answered(outcome.output);
    return failed(outcome.limit ? 'limit' : 'tool', outcome.message);
  } catch (error) {
    // A Pack bug must not leak its stack to the model: the model-safe text names the tool only.
    return failed('tool', `${tool}: the tool failed unexpectedly`);
  }
}

async function modelRound(options: HarnessOptions, role: string, request: Json, onDelta: DeltaListener | undefined): Promise<EffectAnswer> {
  const round = request as unknown as ModelRequest;
  const provider = options.models.provider(round.config, role);
  if (typeof provider === 'string') return failed('model', provider);
  const outcome = await provider.round(round, options.signal, onDelta);
  return outcome.ok ? answered(outcome.reply as unknown as Json) : failed('model', outcome.message);
}

/** The provider's delta listener of a round, when the run has a listener for its deltas. */
function deltaListener(options: HarnessOptions, step: number | undefined, task: string): DeltaListener | undefined {
  const listener = options.onModelDelta;
  if (!listener) return undefined;
  const at = step ?? 0;
  return (delta) => {
    try {
      listener(
        delta.restart ? { type: 'model_delta', step: at, task, text: delta.text, restart: true } : { type: 'model_delta', step: at, task, text: delta.text },
      );
    } catch {
      // A watcher that fails (a closed connection) is no failure of the round: the reply still comes.
    }
  };
}

/** A service directory over a plain record. */
export function servicesOf(record: Record<string, unknown> = {}): ServiceDirectory {
  return { get: <T>(name: string) => (Object.hasOwn(record, name) ? record[name] : undefined) as T | undefined };
}
