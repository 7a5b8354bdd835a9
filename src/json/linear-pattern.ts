/**
 * The regular expressions of JSON Schema (`pattern`, `patternProperties`), matched in time
 * linear in the text: a schema comes from outside (an MCP server, a configuration, a test
 * file) and the text it is matched against from a model steered by untrusted input, so a
 * backtracking engine (`^(a|a)*$` against 30 characters: 12 s in V8) would let either stall
 * the isolate. re2js, the JavaScript port of RE2, matches without backtracking; what RE2
 * cannot match in linear time (lookaround, backreferences) is refused, with the reason.
 *
 * JSON Schema writes patterns in ECMA-262 syntax, read with the `u` flag. re2js's
 * translateRegExp maps most of it (`\u{...}`, named groups, `[^]`); where ECMAScript and RE2
 * differ in meaning rather than spelling, the pattern is rewritten first: `\s` and `\S` take
 * ECMAScript's whitespace (RE2's leaves out `\v` and Unicode spaces), `.` leaves out every
 * ECMAScript line terminator (RE2's only `\n`), and `\k<name>` is refused (re2js would read
 * it as the letters `k<name>`). `\d`, `\w` and `\b` are ASCII in both; `\p{L}` and other
 * general categories and scripts by short name work, `\p{Letter}` and `\p{Script=Greek}`
 * are refused as RE2 does not know them.
 */
import { RE2JS } from 're2js';

/** A pattern ready to be matched: `test` says whether it matches somewhere in the text. */
export interface LinearPattern {
  test(text: string): boolean;
}

/**
 * A pattern compiled, or why it cannot be matched in linear time: `reason` follows "the
 * pattern ..." (`cannot be matched in linear time (it has a backreference)`).
 */
export type LinearPatternOutcome = { ok: true; pattern: LinearPattern } | { ok: false; reason: string };

/** The longest pattern taken, in characters: RE2's program grows with it, and so the cost of each character matched. */
export const MAX_PATTERN_CHARS = 4096;

/** How many compiled patterns the isolate keeps, so a tool checked again compiles nothing. */
const CACHE_ENTRIES = 512;

const cache = new Map<string, LinearPatternOutcome>();

/** Compiles a JSON Schema pattern for linear-time matching, or says why it cannot be. */
export function compileLinearPattern(source: string): LinearPatternOutcome {
  const known = cache.get(source);
  if (known) return known;
  const outcome = compile(source);
  if (cache.size >= CACHE_ENTRIES) cache.clear();
  cache.set(source, outcome);
  return outcome;
}

/** A pattern compiled before, or null: nothing is compiled (for a caller handed text that may be no pattern at all). */
export function compiledLinearPattern(source: string): LinearPattern | null {
  const known = cache.get(source);
  return known?.ok ? known.pattern : null;
}

function compile(source: string): LinearPatternOutcome {
  if (source.length > MAX_PATTERN_CHARS) return { ok: false, reason: `is longer than ${MAX_PATTERN_CHARS} characters` };
  try {
    // ECMAScript's own syntax first: a pattern JSON Schema would refuse is refused for that.
    new RegExp(source, 'u');
  } catch {
    return { ok: false, reason: 'is not a regular expression' };
  }
  const rewritten = rewriteForRe2(source);
  if (!rewritten.ok) return rewritten;
  try {
    return { ok: true, pattern: RE2JS.compile(RE2JS.translateRegExp(rewritten.source)) };
  } catch (error) {
    const message = (error as Error).message.replace(/^error parsing regexp: /, '');
    return { ok: false, reason: `is one RE2 cannot take (${message})` };
  }
}

/** ECMAScript's `\s`: WhiteSpace and LineTerminator, as RE2 class items. */
const SPACE_ITEMS = '\\x{9}-\\x{d}\\x{20}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';
/** Every code point outside ECMAScript's `\s`, as RE2 class items (for `\S` inside a class). */
const NON_SPACE_ITEMS =
  '\\x{0}-\\x{8}\\x{e}-\\x{1f}\\x{21}-\\x{9f}\\x{a1}-\\x{167f}\\x{1681}-\\x{1fff}\\x{200b}-\\x{2027}\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}\\x{3001}-\\x{fefe}\\x{ff00}-\\x{10ffff}';
/** ECMAScript's `.` without the `s` flag: anything but a LineTerminator. */
const DOT = '[^\\x{a}\\x{d}\\x{2028}\\x{2029}]';

/**
 * The pattern with ECMAScript's meanings of `\s`, `\S` and `.` spelled out for RE2, `[` inside
 * a class escaped (RE2 would read `[:alpha:]` there as a POSIX class), and what RE2 cannot
 * match in linear time refused by name. `source` is valid ECMAScript with the `u` flag.
 */
function rewriteForRe2(source: string): { ok: true; source: string } | { ok: false; reason: string } {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === '\\') {
      const next = source[i + 1] ?? '';
      i++;
      if (next === 'k' || (next >= '1' && next <= '9')) return { ok: false, reason: 'cannot be matched in linear time (it has a backreference)' };
      if (next === 's') out += inClass ? SPACE_ITEMS : `[${SPACE_ITEMS}]`;
      else if (next === 'S') out += inClass ? NON_SPACE_ITEMS : `[^${SPACE_ITEMS}]`;
      else out += `\\${next}`;
    } else if (inClass) {
      if (ch === ']') inClass = false;
      out += ch === '[' ? '\\[' : ch;
    } else if (ch === '[') {
      inClass = true;
      out += ch;
      // `[^` opens a negated class: the `^` is not an item.
      if (source[i + 1] === '^') out += source[++i];
    } else if (ch === '.') {
      out += DOT;
    } else if (
      ch === '(' &&
      source[i + 1] === '?' &&
      (source[i + 2] === '=' || source[i + 2] === '!' || (source[i + 2] === '<' && (source[i + 3] === '=' || source[i + 3] === '!')))
    ) {
      return { ok: false, reason: 'cannot be matched in linear time (it has a lookahead or lookbehind)' };
    } else {
      out += ch;
    }
  }
  return { ok: true, source: out };
}
