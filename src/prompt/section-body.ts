/**
 * Splits the body of the H1 or of a `##` section the way the Engine runs it: the Lua blocks
 * before the first prose (the prologue) run first, then the prose is rendered, then the
 * blocks after it (the epilogue) decide what to do with it. A body with no epilogue is a
 * model step (DESIGN.md, "Prose").
 */
import type { LuaBlock, SectionBody } from './types.ts';

/** One piece of a body in file order: a prose line (comments already cut) or a Lua block. */
export type BodyItem = { type: 'prose'; text: string } | { type: 'lua'; block: LuaBlock };

/** Builds the prologue / prose / epilogue split of a body. */
export function splitBody(items: readonly BodyItem[]): SectionBody {
  const prologue: LuaBlock[] = [];
  const epilogue: LuaBlock[] = [];
  const segments: string[][] = [[]];
  let seenProse = false;
  for (const item of items) {
    if (item.type === 'lua') {
      (seenProse ? epilogue : prologue).push(item.block);
      // A Lua block between two runs of prose separates them like a blank line.
      segments.push([]);
      continue;
    }
    if (item.text.trim() !== '') seenProse = true;
    segments[segments.length - 1]?.push(item.text);
  }
  const prose = segments
    .map((lines) => trimBlankLines(lines).join('\n'))
    .filter((text) => text !== '')
    .join('\n\n')
    .trim();
  return { prologue, prose, epilogue };
}

function trimBlankLines(lines: readonly string[]): readonly string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]?.trim() === '') start++;
  while (end > start && lines[end - 1]?.trim() === '') end--;
  return lines.slice(start, end);
}
