/**
 * The manifest of runvil/subagents: a Pack with no tools. Every run holds it (the chapter's
 * `packs.extras()` example lists it), and it names the Engine's task machinery, through
 * which a section runs other sections as subagents.
 */
import type { PackManifest } from '../../src/host/pack.ts';

/** The manifest of runvil/subagents. */
export const SUBAGENTS_MANIFEST: PackManifest = {
  fqName: 'runvil/subagents',
  description: 'Run sections of the prompt as subagent tasks',
  tools: [],
};
