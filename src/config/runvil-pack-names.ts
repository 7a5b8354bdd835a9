/**
 * The runvil Packs' fully qualified names (packs/), for the configuration's check that a
 * configured Pack does not take one's Pack id: `evil/web` would be `web` in a prompt's
 * `uses:` and tool ids, where a reader takes `web/fetch` for runvil/web's. The config layer
 * does not import packs/, so the names are written here; test/config/runvil-pack-names.test.ts
 * holds them to packs/index.ts.
 */

/** The runvil Packs, by fully qualified name. */
export const RUNVIL_PACK_NAMES: readonly string[] = ['runvil/web', 'runvil/user-input', 'runvil/subagents'];

/** The runvil Pack whose Pack id is `packId`, or null. */
export function runvilPackWithId(packId: string): string | null {
  return RUNVIL_PACK_NAMES.find((name) => name.slice(name.indexOf('/') + 1) === packId) ?? null;
}
