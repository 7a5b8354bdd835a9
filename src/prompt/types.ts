/**
 * The parsed form of a prompt file: what `src/prompt/` produces and the Engine consumes.
 */
import type { Json } from '../json/json.ts';

/** One entry of the frontmatter's `uses:` list, already checked against the name grammar. */
export interface UsesEntry {
  /** The entry as written, such as `web` or `acme/poop`. */
  text: string;
  /** `runvil` for a bare entry, else the first segment. */
  vendor: string;
  /** The Pack id: the last segment. */
  packId: string;
  /** The fully qualified name, `vendor/packId`. */
  fqName: string;
  line: number;
  column: number;
}

/** A model role's configuration; `{}` means the Host's default model. */
export interface ModelConfig {
  provider?: string;
  model?: string;
  temperature?: number;
  max_tokens?: number;
  base_url?: string;
  round_cap?: number;
  /** Tokens the model's context holds; rounds that cannot fit are refused before they are sent. */
  context_window?: number;
}

/** The type of one run argument declared under `args:`. */
export type ArgType = 'string' | 'integer' | 'number' | 'boolean' | 'json';

/** One run argument declared under `args:`. */
export interface ArgSpec {
  type: ArgType;
  /** A default makes the argument optional. */
  default?: Json;
  description?: string;
  /** A `json` arg's JSON Schema (2020-12), which its value must fit (arg-schema.ts). */
  schema?: Json;
}

/** The validated frontmatter. */
export interface Frontmatter {
  name: string;
  description: string;
  runvil: 0;
  uses: UsesEntry[];
  models: Record<string, ModelConfig>;
  args: Record<string, ArgSpec>;
}

/** A ```lua fenced block. */
export interface LuaBlock {
  source: string;
  /** 1-based line of the block's first source line in the file. */
  line: number;
}

/**
 * The body of the H1 or of one `##` section, split the way the Engine runs it:
 * the Lua blocks before the first prose (prologue), the prose, the blocks after it (epilogue).
 */
export interface SectionBody {
  prologue: LuaBlock[];
  /** Prose text with HTML comments removed, trimmed; '' when the body has none. */
  prose: string;
  epilogue: LuaBlock[];
}

/** One `##` section. */
export interface Section extends SectionBody {
  /** The heading text without `## `, trimmed, such as `Ask`. */
  name: string;
  /** 1-based line of the heading. */
  line: number;
}

/** A parsed prompt. */
export interface Prompt {
  /** The file it came from, for messages; '<inline>' when it has none. */
  file: string;
  frontmatter: Frontmatter;
  /** The H1 text, such as `Ask once`. */
  title: string;
  /** The H1 body: its Lua runs in the H1 pass; its prose is every conversation's system message. */
  h1: SectionBody;
  sections: Section[];
}

/** A problem found while parsing. `kind` is the run error kind the run fails with. */
export interface PromptError {
  kind: 'Frontmatter' | 'Prompt';
  message: string;
  file: string;
  line?: number;
  column?: number;
}

/** The outcome of parsing: a prompt, or every error found. */
export type ParseResult = { ok: true; prompt: Prompt } | { ok: false; errors: PromptError[] };
