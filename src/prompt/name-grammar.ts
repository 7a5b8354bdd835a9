/**
 * The name grammar: Pack ids, `uses:` entries, tool ids, wire names, and the alias grammar
 * shared by local tool aliases, model role labels and arg names. Every layer checks names
 * here, so each reason in the Tools chapter ("Name errors and their reasons") is written once.
 */

/** Reason: a segment is empty (an empty name, a leading, trailing or doubled `/`). */
export const REASON_EMPTY = 'segments must not be empty';
/** Reason: a segment holds a byte below 0x20 or 0x7F. */
export const REASON_CONTROL = 'segments must not contain a control character';
/** Reason: a segment holds any other character outside `[a-z0-9._-]`. */
export const REASON_CHARSET = "segments may contain only lowercase ASCII letters, digits, '-', '_', '.'";
/** Reason: a Pack id has more than one segment. */
export const REASON_PACK_ID_SEGMENTS = "a Pack id is one segment, such as `web`, with no '/'";
/** Reason: a `uses:` entry has three or more segments. */
export const REASON_USES_SEGMENTS = 'a uses entry is a Pack id, such as `web`, or vendor/name, such as `acme/web`';
/** Reason: a tool id has fewer than two segments. */
export const REASON_TOOL_ID_SEGMENTS = 'a tool id has two or more segments, such as `web/fetch`';

/** The vendor a bare `uses:` entry means. */
export const DEFAULT_VENDOR = 'runvil';

/** A name check's outcome: the segments, or the one reason it failed. */
export type NameResult = { ok: true; segments: string[] } | { ok: false; reason: string };

/** A Pack id check's outcome. */
export type PackIdResult = { ok: true; id: string } | { ok: false; reason: string };

/** A `uses:` entry check's outcome: the Pack it means. */
export type UsesEntryResult = { ok: true; vendor: string; packId: string; fqName: string } | { ok: false; reason: string };

/** A tool id check's outcome: the owning Pack id (first segment) and tool name (last). */
export type ToolIdResult = { ok: true; id: string; segments: string[]; packId: string; name: string } | { ok: false; reason: string };

const ALLOWED_CHAR = /[a-z0-9._-]/;

/**
 * Checks a slash-separated name. Segments are checked left to right and characters left to
 * right, and the first failure decides the reason, so `Web/` fails on the charset, not on
 * its empty second segment.
 */
export function parseName(text: string): NameResult {
  const segments = text.split('/');
  for (const segment of segments) {
    if (segment === '') return { ok: false, reason: REASON_EMPTY };
    for (const char of segment) {
      const code = char.charCodeAt(0);
      // A control character gets its own reason even though it is also outside the set.
      if (code < 0x20 || code === 0x7f) return { ok: false, reason: REASON_CONTROL };
      if (!ALLOWED_CHAR.test(char)) return { ok: false, reason: REASON_CHARSET };
    }
  }
  return { ok: true, segments };
}

/** Checks a Pack id: a valid name of exactly one segment (segments are checked first). */
export function parsePackId(text: string): PackIdResult {
  const name = parseName(text);
  if (!name.ok) return name;
  if (name.segments.length !== 1) return { ok: false, reason: REASON_PACK_ID_SEGMENTS };
  return { ok: true, id: text };
}

/** Checks a `uses:` entry: a bare Pack id (vendor `runvil`) or `vendor/name`. */
export function parseUsesEntry(text: string): UsesEntryResult {
  const name = parseName(text);
  if (!name.ok) return name;
  const [first, second] = name.segments;
  if (name.segments.length > 2 || first === undefined) {
    return { ok: false, reason: REASON_USES_SEGMENTS };
  }
  const vendor = second === undefined ? DEFAULT_VENDOR : first;
  const packId = second ?? first;
  return { ok: true, vendor, packId, fqName: `${vendor}/${packId}` };
}

/** Checks a tool id: two or more segments, the first naming the Pack, the last the tool. */
export function parseToolId(text: string): ToolIdResult {
  const name = parseName(text);
  if (!name.ok) return name;
  const { segments } = name;
  const packId = segments[0];
  const toolName = segments[segments.length - 1];
  if (segments.length < 2 || packId === undefined || toolName === undefined) {
    return { ok: false, reason: REASON_TOOL_ID_SEGMENTS };
  }
  return { ok: true, id: text, segments, packId, name: toolName };
}

/** The name the model sees for a catalog tool: its tool id with every `/` and `.` as `_`. */
export function wireName(toolId: string): string {
  return toolId.replace(/[/.]/g, '_');
}

const WIRE_NAME = /^[A-Za-z0-9_.-]+$/;

/** Whether a name may reach a model as a tool name (catalog wire names and local aliases). */
export function isValidWireName(name: string): boolean {
  return WIRE_NAME.test(name);
}

/** The alias grammar as the messages quote it. */
export const ALIAS_GRAMMAR = '[A-Za-z][A-Za-z0-9_-]{0,63}';

/** The alias grammar shared by local tool aliases, model role labels and arg names. */
export const ALIAS_PATTERN = new RegExp(`^${ALIAS_GRAMMAR}$`);

/** Checks a local tool alias; the failure message is the one `tools.offer_local` raises. */
export function checkAlias(alias: string): { ok: true } | { ok: false; message: string } {
  if (ALIAS_PATTERN.test(alias)) return { ok: true };
  return { ok: false, message: `invalid alias ${JSON.stringify(alias)}: expected ${ALIAS_GRAMMAR}` };
}

/** Renders names for a message as `["a", "b"]` (`[]` when empty), per spec NOTES item 1. */
export function formatNameList(names: readonly string[]): string {
  return `[${names.map((name) => JSON.stringify(name)).join(', ')}]`;
}
