/**
 * The run's catalog as the Engine sees it: the Packs the run knows and the data of every
 * catalog tool (never its code). The Host prepares it (src/host/catalog.ts).
 */
import type { Json } from '../json/json.ts';

/** The names the task built-ins reserve. */
export const TASK_BUILTINS = ['task', 'task_cancel', 'task_status', 'await_tasks'] as const;

/** A catalog tool as the run holds it: its data, never its code. */
export interface CatalogTool {
  /** The tool id, such as `web/fetch`. */
  id: string;
  description: string;
  /** JSON Schema of the arguments, copied unchanged to the model. */
  parameters: Json;
  output: 'plain' | 'structured';
  trusted: boolean;
  /** The Pack id that owns it (the tool id's first segment). */
  pack: string;
  /** Its wire name when the run can offer it, or null when the offering leaves it out. */
  wire: string | null;
}

/** A Pack the run knows. */
export interface CatalogPack {
  id: string;
  fqName: string;
  description: string;
  declared: boolean;
}

/** What the Engine needs to know of the run's Packs and tools. Data only. */
export interface RunCatalog {
  /** Usable Packs, sorted by Pack id. */
  packs: CatalogPack[];
  /** Packs that cannot serve the run, with the Host's reason written for the model. */
  unavailable: { id: string; reason: string }[];
  /** Every catalog tool, in tool id order (left-out tools included, with wire null). */
  tools: CatalogTool[];
  /** Preludes of declared Packs, in uses: order. */
  preludes: { packId: string; source: string }[];
  /** Log lines of preparation, such as dropped tools. */
  log: string[];
}

/** The catalog of a run served with no Packs at all. */
export const EMPTY_CATALOG: RunCatalog = { packs: [], unavailable: [], tools: [], preludes: [], log: [] };
