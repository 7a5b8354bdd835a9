/**
 * The parsing layer's public API: text in, a parsed prompt (or every error) out, plus the
 * name grammar and heading references the Engine and Host check names with.
 */
export type * from './types.ts';
export { parsePrompt } from './parse.ts';
export { parseHeadingRef, findSection, type HeadingRefResult, type FindSectionResult } from './heading-ref.ts';
export { FRONTMATTER_PREFIX } from './frontmatter.ts';
export {
  REASON_EMPTY,
  REASON_CONTROL,
  REASON_CHARSET,
  REASON_PACK_ID_SEGMENTS,
  REASON_USES_SEGMENTS,
  REASON_TOOL_ID_SEGMENTS,
  DEFAULT_VENDOR,
  ALIAS_GRAMMAR,
  ALIAS_PATTERN,
  parseName,
  parsePackId,
  parseUsesEntry,
  parseToolId,
  wireName,
  isValidWireName,
  checkAlias,
  formatNameList,
  type NameResult,
  type PackIdResult,
  type UsesEntryResult,
  type ToolIdResult,
} from './name-grammar.ts';
