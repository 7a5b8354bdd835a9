/**
 * I-Regexp (RFC 9485), the regular expressions of JSONPath's `match()` and `search()`
 * (RFC 9535 2.4.6-2.4.7), read by its grammar and written out for RE2 (re2js), which
 * matches in time linear in the text: a trigger's path runs on a payload an attacker
 * writes, and may even take its pattern from the payload, so V8's backtracking engine
 * (`(a|a)*b` against a long run of `a`) would let a delivery stall the isolate.
 *
 * Written out rather than handed over: every literal character becomes `\x{...}`, so
 * characters I-Regexp takes literally and RE2 would not (`^`, `$`) keep their I-Regexp
 * meaning; `.` becomes `[^\n\r]` (RFC 9485 5.3); a group becomes `(?:...)`. A text that is
 * no I-Regexp is refused with the reason, as is one RE2 cannot take (a repeat count past
 * 1000).
 */
import { RE2JS } from 're2js';

/** A compiled I-Regexp: `match` is a whole-text match, `search` finds it anywhere. */
export interface IRegexp {
  match(text: string): boolean;
  search(text: string): boolean;
}

/** A compiled I-Regexp, or why the text is none (a phrase: `has an unclosed group`). */
export type IRegexpOutcome = { ok: true; regexp: IRegexp } | { ok: false; reason: string };

/** The longest pattern compiled, in characters: RE2's program grows with it, and so the cost of each character matched. */
export const MAX_I_REGEXP_CHARS = 1024;

/**
 * The most steps per character of text a pattern may cost by default: RE2's simulation
 * follows every state of the program at once, so `\p{L}{1000}` costs a thousand per
 * character (150 ms on 10,000 characters), linear but not cheap.
 */
export const MAX_I_REGEXP_SIZE = 1_000;

/**
 * Compiles `source` as an I-Regexp, or says why it is none. `maxSize` bounds its size: the
 * characters and classes it matches, counted as often as a repeat `{n,m}` repeats them.
 */
export function compileIRegexp(source: string, maxSize = MAX_I_REGEXP_SIZE): IRegexpOutcome {
  if (source.length > MAX_I_REGEXP_CHARS) return { ok: false, reason: `is longer than ${MAX_I_REGEXP_CHARS} characters` };
  let re2: string;
  try {
    const translated = new Translator(source).regexp();
    if (translated.size > maxSize)
      return { ok: false, reason: `is too large: it has ${translated.size} characters and classes to match, repeats counted, more than ${maxSize}` };
    re2 = translated.re;
  } catch (error) {
    if (error instanceof NotIRegexp) return { ok: false, reason: error.message };
    throw error;
  }
  let whole: RE2JS;
  let anywhere: RE2JS;
  try {
    whole = RE2JS.compile(`^(?:${re2})$`);
    anywhere = RE2JS.compile(re2);
  } catch (error) {
    return { ok: false, reason: `is one RE2 cannot take (${(error as Error).message.replace(/^error parsing regexp: /, '')})` };
  }
  return { ok: true, regexp: { match: (text) => whole.matches(text), search: (text) => anywhere.test(text) } };
}

class NotIRegexp extends Error {}

/** Part of a pattern written for RE2, with its size (see compileIRegexp). */
interface Piece {
  re: string;
  size: number;
}

/** The general categories `\p{..}` may name (RFC 9485 IsCategory). */
const CATEGORIES = new Set(
  ['L', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'M', 'Mc', 'Me', 'Mn', 'N', 'Nd', 'Nl', 'No', 'P', 'Pc', 'Pd', 'Pe', 'Pf', 'Pi', 'Po', 'Ps'].concat([
    'Z',
    'Zl',
    'Zp',
    'Zs',
    'S',
    'Sc',
    'Sk',
    'Sm',
    'So',
    'C',
    'Cc',
    'Cf',
    'Cn',
    'Co',
  ]),
);
/** The characters `\` may escape (RFC 9485 SingleCharEsc), with what each stands for. */
const SINGLE_ESCAPES: ReadonlyMap<string, number> = new Map([
  ...[...'()*+-.?[\\]^{|}'].map((ch): [string, number] => [ch, ch.codePointAt(0)!]),
  ['n', 0x0a],
  ['r', 0x0d],
  ['t', 0x09],
]);
/** Characters that are no NormalChar: they mean something in an I-Regexp. */
const SPECIAL = new Set([...'()*+.?[\\]{|}']);
/** Characters that are no CCchar: they mean something in a character class. */
const CLASS_SPECIAL = new Set([...'-[\\]']);

/** A recursive-descent reader of RFC 9485's grammar, writing RE2 syntax as it goes. */
class Translator {
  private readonly chars: string[];
  private at = 0;

  constructor(source: string) {
    // Code points: a literal outside the BMP is one character.
    this.chars = [...source];
  }

  regexp(): Piece {
    const out = this.alternatives();
    if (this.at < this.chars.length) throw new NotIRegexp(this.peek() === ')' ? 'has a ) that closes no group' : `cannot have ${this.peek()} here`);
    return out;
  }

  private peek(): string | undefined {
    return this.chars[this.at];
  }

  private alternatives(): Piece {
    const branches = [this.branch()];
    while (this.peek() === '|') {
      this.at++;
      branches.push(this.branch());
    }
    return { re: branches.map((branch) => branch.re).join('|'), size: branches.reduce((sum, branch) => sum + branch.size, 0) };
  }

  private branch(): Piece {
    let re = '';
    let size = 0;
    for (let ch = this.peek(); ch !== undefined && ch !== '|' && ch !== ')'; ch = this.peek()) {
      const atom = this.atom();
      const { text, times } = this.quantifier();
      re += atom.re + text;
      size += atom.size * times;
    }
    return { re, size };
  }

  private atom(): Piece {
    const ch = this.chars[this.at++]!;
    if (ch === '(') {
      const inner = this.alternatives();
      if (this.chars[this.at++] !== ')') throw new NotIRegexp('has an unclosed group');
      return { re: `(?:${inner.re})`, size: inner.size };
    }
    if (ch === '.') return { re: '[^\\n\\r]', size: 1 };
    if (ch === '[') return { re: this.charClass(), size: 1 };
    if (ch === '\\') return { re: this.escape(false), size: 1 };
    if (SPECIAL.has(ch)) throw new NotIRegexp(`cannot have ${ch} here (write \\${ch} for the character)`);
    return { re: literal(ch), size: 1 };
  }

  /** A quantifier's text for RE2, and how many copies of its atom RE2's program holds. */
  private quantifier(): { text: string; times: number } {
    const ch = this.peek();
    if (ch === '*' || ch === '+' || ch === '?') {
      this.at++;
      return { text: ch, times: 1 };
    }
    if (ch !== '{') return { text: '', times: 1 };
    this.at++;
    const low = this.digits();
    let out = `{${low}`;
    let times = Number(low) + 1;
    if (this.peek() === ',') {
      this.at++;
      out += ',';
      if (this.peek() !== '}') {
        const high = this.digits();
        out += high;
        times = Number(high);
      }
    } else {
      times = Number(low);
    }
    if (this.chars[this.at++] !== '}') throw new NotIRegexp('has a repeat {n}, {n,} or {n,m} that is not closed');
    return { text: `${out}}`, times: Math.max(times, 1) };
  }

  private digits(): string {
    let out = '';
    while (this.peek() !== undefined && /[0-9]/.test(this.peek()!)) out += this.chars[this.at++];
    if (out === '') throw new NotIRegexp('has a repeat {n}, {n,} or {n,m} without its number');
    return out;
  }

  /** After `\`: a single-character escape, or `\p{..}` / `\P{..}`. */
  private escape(inClass: boolean): string {
    const ch = this.chars[this.at++];
    if (ch === 'p' || ch === 'P') {
      if (this.chars[this.at++] !== '{') throw new NotIRegexp(`has \\${ch} without {category}`);
      let name = '';
      while (this.peek() !== undefined && this.peek() !== '}') name += this.chars[this.at++];
      if (this.chars[this.at++] !== '}' || !CATEGORIES.has(name))
        throw new NotIRegexp(`has \\${ch}{${name}}, which names no general category (such as L, Lu, Nd)`);
      return `\\${ch}{${name}}`;
    }
    const code = ch === undefined ? undefined : SINGLE_ESCAPES.get(ch);
    if (code === undefined) throw new NotIRegexp(ch === undefined ? 'ends with \\' : `has \\${ch}, which I-Regexp does not have`);
    return inClass ? hex(code) : `[${hex(code)}]`;
  }

  /** After `[`: `[^...]`, with ranges, escapes and a `-` first or last. */
  private charClass(): string {
    let out = '[';
    if (this.peek() === '^') {
      this.at++;
      out += '^';
    }
    let first = true;
    for (;;) {
      const ch = this.peek();
      if (ch === undefined) throw new NotIRegexp('has an unclosed [');
      if (ch === ']' && !first) {
        this.at++;
        return `${out}]`;
      }
      if (ch === '-' && (first || this.chars[this.at + 1] === ']')) {
        this.at++;
        out += hex(0x2d);
      } else {
        const low = this.classChar();
        if (this.peek() === '-' && this.chars[this.at + 1] !== ']') {
          this.at++;
          const high = this.classChar();
          if (low.category || high.category) throw new NotIRegexp('has a range from or to a category');
          if (high.code < low.code) throw new NotIRegexp('has a range whose end comes before its start');
          out += `${hex(low.code)}-${hex(high.code)}`;
        } else {
          out += low.category ?? hex(low.code);
        }
      }
      first = false;
    }
  }

  private classChar(): { code: number; category?: string } {
    const ch = this.chars[this.at++]!;
    if (ch === '\\') {
      const escaped = this.escape(true);
      return escaped.startsWith('\\p') || escaped.startsWith('\\P') ? { code: -1, category: escaped } : { code: parseInt(escaped.slice(3, -1), 16) };
    }
    if (CLASS_SPECIAL.has(ch)) throw new NotIRegexp(`cannot have ${ch} here in a [class] (write \\${ch} for the character)`);
    return { code: codeOf(ch) };
  }
}

function literal(ch: string): string {
  return hex(codeOf(ch));
}

/** The code point of one character of the pattern; a lone surrogate is no character of an I-Regexp. */
function codeOf(ch: string): number {
  const code = ch.codePointAt(0)!;
  if (code >= 0xd800 && code <= 0xdfff) throw new NotIRegexp('has a lone surrogate, which is no character');
  return code;
}

function hex(code: number): string {
  return `\\x{${code.toString(16)}}`;
}
