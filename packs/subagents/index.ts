/**
 * runvil/subagents: no tools of its own, so every call is refused with a model-safe text.
 */
import type { Pack } from '../../src/host/pack.ts';
import { SUBAGENTS_MANIFEST } from './manifest.ts';

/** Builds runvil/subagents. */
export function subagentsPack(): Pack {
  return {
    manifest: SUBAGENTS_MANIFEST,
    async call(tool) {
      return { ok: false, message: `${tool}: runvil/subagents has no tools` };
    },
  };
}

export { SUBAGENTS_MANIFEST } from './manifest.ts';
