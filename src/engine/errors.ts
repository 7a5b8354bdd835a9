/**
 * Run errors: how a run fails, and how Lua-side error kinds map onto run error kinds.
 */

/** The kinds a failed run reports. `Prompt` covers a file the parser refuses outside the frontmatter. */
export type RunErrorKind =
  | 'Frontmatter'
  | 'Prompt'
  | 'RequirementsUnmet'
  | 'Lua'
  | 'Tool'
  | 'Model'
  | 'Store'
  | 'Determinism'
  | 'Cancelled'
  | 'Limit';

/** Why a run failed, written for the person who reads it. */
export interface RunError {
  kind: RunErrorKind;
  message: string;
  /** Where in the prompt file, when the error has a place. */
  file?: string;
  line?: number;
  column?: number;
  /** The Lua traceback of an uncaught Lua error, when there is one. */
  traceback?: string;
}

const RUN_KIND_OF_LUA_KIND: Record<string, RunErrorKind> = {
  lua: 'Lua',
  tool: 'Tool',
  unbound_tool: 'Tool',
  out_of_scope_tool: 'Tool',
  store: 'Store',
  model: 'Model',
  cancelled: 'Cancelled',
  limit: 'Limit',
  determinism: 'Determinism',
};

const RUN_KINDS = new Set<string>(Object.values(RUN_KIND_OF_LUA_KIND).concat(['Frontmatter', 'Prompt', 'RequirementsUnmet']));

/** The run error kind an uncaught Lua error value of `kind` ends the run with. */
export function runKindOf(luaKind: string): RunErrorKind {
  if (RUN_KINDS.has(luaKind)) return luaKind as RunErrorKind;
  return RUN_KIND_OF_LUA_KIND[luaKind] ?? 'Lua';
}

/** The Lua-side kind for a run error kind (an error crossing from a called section back into Lua). */
export function luaKindOf(kind: RunErrorKind): string {
  for (const [lua, run] of Object.entries(RUN_KIND_OF_LUA_KIND)) if (run === kind) return lua;
  return 'lua';
}
