/**
 * Heading references: how Lua names a section in `jump('## X')`, `call('## X')`,
 * `require '## X'` and task targets. A reference is `## Name`, compared after trimming,
 * case-sensitively (DESIGN.md, "The walk").
 */
import type { Prompt, Section } from './types.ts';

/** A heading reference's outcome: the section name it means, or why it is malformed. */
export type HeadingRefResult = { ok: true; name: string } | { ok: false; message: string };

/** A section lookup's outcome: the section, or a message naming the reference. */
export type FindSectionResult = { ok: true; section: Section } | { ok: false; message: string };

/** Reads `## Name` into the section name `Name`. */
export function parseHeadingRef(ref: string): HeadingRefResult {
  const match = /^##[ \t]+(.*)$/.exec(ref.trim());
  const name = match?.[1]?.trim() ?? '';
  if (name === '') {
    return { ok: false, message: `invalid heading reference ${JSON.stringify(ref)}: expected "## Name", such as "## Ask"` };
  }
  return { ok: true, name };
}

/** Finds the section a reference names; the failure message is the Lua error to raise. */
export function findSection(prompt: Prompt, ref: string): FindSectionResult {
  const parsed = parseHeadingRef(ref);
  if (!parsed.ok) return parsed;
  const section = prompt.sections.find((candidate) => candidate.name === parsed.name);
  if (!section) return { ok: false, message: `unknown heading ${JSON.stringify(`## ${parsed.name}`)}` };
  return { ok: true, section };
}
