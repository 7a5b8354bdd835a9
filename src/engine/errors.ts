/**
 * Run errors: how a run fails, and how Lua-side error kinds map onto run error kinds.
 */

/** The kinds a failed run reports. `Prompt` covers a file the parser refuses outside the frontmatter. */
export type RunErrorKind = 'Frontmatter' | 'Prompt' | 'RequirementsUnmet' | 'Lua' | 'Tool' | 'Model' | 'Store' | 'Determinism' | 'Cancelled' | 'Limit';

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

/**
 * The run kinds of the Engine's own Lua-side error kinds. Only these map to a run kind other
 * than `Lua`: the runtime reports any error value it did not make as `lua`, and a kind such
 * as `cancelled` or `limit` in Lua ends no run as Cancelled or Limit (the Engine's stop does).
 */
const RUN_KIND_OF_LUA_KIND: ReadonlyMap<string, RunErrorKind> = new Map([
  ['tool', 'Tool'],
  ['unbound_tool', 'Tool'],
  ['out_of_scope_tool', 'Tool'],
  ['store', 'Store'],
  ['model', 'Model'],
]);

/** The Lua-side kind of each run kind an error crossing back into Lua can carry. */
const LUA_KIND_OF_RUN_KIND: ReadonlyMap<RunErrorKind, string> = new Map([
  ['Tool', 'tool'],
  ['Store', 'store'],
  ['Model', 'model'],
  ['Cancelled', 'cancelled'],
  ['Limit', 'limit'],
  ['Determinism', 'determinism'],
]);

/** The run error kind an uncaught Lua error value of `kind` ends the run with. */
export function runKindOf(luaKind: string): RunErrorKind {
  return RUN_KIND_OF_LUA_KIND.get(luaKind) ?? 'Lua';
}

/** The Lua-side kind for a run error kind (an error crossing from a called section back into Lua). */
export function luaKindOf(kind: RunErrorKind): string {
  return LUA_KIND_OF_RUN_KIND.get(kind) ?? 'lua';
}
