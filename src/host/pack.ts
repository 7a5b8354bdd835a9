/**
 * Packs as the Host sees them: a manifest (what the run's catalog shows) and the code that
 * performs its tools.
 */
import type { Json } from '../json/json.ts';
import type { RunStore } from './run-store.ts';
import type { Operator } from './operator.ts';
import type { CallLedger } from './tool-calls.ts';
import type { CallRounds } from './call-rounds.ts';

/** One tool a Pack contributes, as its manifest describes it. */
export interface ToolManifest {
  /** The tool id, such as `web/fetch`. */
  id: string;
  /** One sentence the model reads when the tool is offered. */
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Json;
  /** `structured` tools answer one JSON value; `plain` tools answer text. */
  output: 'plain' | 'structured';
  /** Trusted output reaches the model verbatim; untrusted output is wrapped. */
  trusted: boolean;
}

/** A Pack's manifest. */
export interface PackManifest {
  /** The fully qualified name, such as `runvil/web`. */
  fqName: string;
  description: string;
  tools: ToolManifest[];
  /** Lua source installed in every section VM when the prompt declares the Pack. */
  prelude?: string;
  /** Services the Pack needs from the environment, such as `runvil/search-provider`. */
  services?: string[];
}

/**
 * What a tool call answers: its output text, or its model-safe failure text; or, with
 * `limit`, a cap the call passed (its output's size), which ends the run with `Limit`.
 */
export type ToolOutcome = { ok: true; output: string } | { ok: false; message: string; limit?: true };

/** What a tool call is lent: the run's own services. */
export interface ToolContext {
  runId: string;
  /** The run's files, the same ones `store` sees. */
  store: RunStore;
  /** The run's input broker: answers operator asks. */
  operator: Operator;
  /** Services the environment provides, by name (such as `runvil/search-provider`). */
  services: ServiceDirectory;
  signal?: AbortSignal;
  /** The effect this call is, as (chain, sequence number); stable across replays. */
  effect?: { chain: string; seq: number };
  /** Where calls whose result comes later wait for it (tool-calls.ts); absent on a Host that cannot receive results. */
  calls?: CallLedger;
  /** Where a call whose server asks before it answers keeps its rounds (call-rounds.ts); absent: the call keeps them in memory. */
  rounds?: CallRounds;
}

/** Services by name; a Pack needing one the directory lacks cannot serve. */
export interface ServiceDirectory {
  get<T = unknown>(name: string): T | undefined;
}

/** A Pack: its manifest and the code that performs its tools. */
export interface Pack {
  manifest: PackManifest;
  /** Performs one of its tools. `tool` is the tool id. Failures are answers, not exceptions. */
  call(tool: string, args: { [key: string]: Json }, context: ToolContext): Promise<ToolOutcome>;
  /** Why the Pack cannot serve in this environment, or null when it can (checked at prepare). */
  unavailableReason?(services: ServiceDirectory): string | null;
  /** Releases what the Pack holds for the run (open connections); called once the run ends. */
  dispose?(): Promise<void>;
}
