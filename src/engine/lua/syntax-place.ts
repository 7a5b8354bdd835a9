/**
 * Where a Lua syntax error is. Lua's `load` says `chunk:LINE: message near 'TOKEN'` (or
 * `near <eof>`), with no column; the column is found here by lexing the source the way
 * Lua's lexer does (llex.c: names, numerals, short and long strings, comments, symbols) and
 * taking the token Lua names on the line it names. When that token appears more than once
 * there, the one Lua stopped at is the first whose cut source (the text up to its end) fails
 * to compile with the very same message: before it, the cut source ends early and fails
 * `near <eof>` instead.
 *
 * Columns count characters (code points) from 1, a tab as one, as editors and compilers
 * place an error.
 */

/** A syntax error placed in its source. */
export interface SyntaxPlace {
  line: number;
  column: number;
  /** Lua's message without its `chunk:LINE:` prefix, such as `unexpected symbol near '='`. */
  message: string;
  /** The UTF-16 index in the source the place is at. */
  offset: number;
}

/** A place the error may be at, and the text up to its token's end that tells whether it is. */
export interface SyntaxCandidate {
  place: SyntaxPlace;
  /** The UTF-16 index the cut source ends at. */
  cut: number;
}

/** What `placeSyntaxError` needs of Lua: `load`'s message for a text, or null when it compiles. */
export type Compile = (source: string) => string | null;

/**
 * The candidate places of a `load` error of `source` compiled under the chunk name `chunk`
 * (as Lua prints it, without the `=`), best first; null when the error is not a syntax
 * error of that chunk. `fallback` is the place to use when no cut settles the question.
 */
export function syntaxCandidates(source: string, chunk: string, error: string): { fallback: SyntaxPlace; candidates: SyntaxCandidate[] } | null {
  const head = `${chunk}:`;
  if (!error.startsWith(head)) return null;
  const lineMatch = /^(\d+): ([\s\S]*)$/.exec(error.slice(head.length));
  if (!lineMatch) return null;
  const line = Number(lineMatch[1]);
  const message = lineMatch[2]!;
  const lines = lineStarts(source);
  const near = /^[\s\S]*? near (?:'([\s\S]*)'|(<eof>))$/.exec(message);
  const at = (offset: number): SyntaxPlace => ({ ...position(source, lines, offset), message, offset });

  if (near?.[2] !== undefined) return { fallback: at(endOfText(source)), candidates: [] };
  const lineStart = lines[Math.min(Math.max(line, 1), lines.length) - 1]!;
  const firstOfLine = at(firstNonBlank(source, lineStart));
  if (near?.[1] === undefined) return { fallback: firstOfLine, candidates: [] };

  const text = near[1];
  const tokens = lexTokens(source).filter((token) => token.endLine === line && matches(token, text));
  const candidates = tokens.map((token) => ({ place: at(token.start), cut: token.end }));
  return { fallback: candidates[0]?.place ?? firstOfLine, candidates };
}

/** Places a `load` error of `source` (see syntaxCandidates); null when it is not a syntax error of `chunk`. */
export function placeSyntaxError(source: string, chunk: string, error: string, compile: Compile): SyntaxPlace | null {
  const found = syntaxCandidates(source, chunk, error);
  if (found === null) return null;
  if (found.candidates.length <= 1) return found.candidates[0]?.place ?? found.fallback;
  for (const candidate of found.candidates) {
    if (compile(source.slice(0, candidate.cut)) === error) return candidate.place;
  }
  return found.fallback;
}

/** `chunk:LINE:COLUMN: message`, the form every report of a placed syntax error takes. */
export function formatSyntaxError(chunk: string, place: SyntaxPlace): string {
  return `${chunk}:${place.line}:${place.column}: ${place.message}`;
}

// ---------------------------------------------------------------------------------------
// Positions

/** UTF-16 index of each line's start; a line ends at \n, \r, \r\n or \n\r, as Lua counts. */
function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c !== '\n' && c !== '\r') continue;
    const next = source[i + 1];
    if ((next === '\n' || next === '\r') && next !== c) i++;
    starts.push(i + 1);
  }
  return starts;
}

/** The 1-based line and column (in code points) of a UTF-16 index of `source`. */
export function positionOf(source: string, offset: number): { line: number; column: number } {
  return position(source, lineStarts(source), offset);
}

function position(source: string, lines: readonly number[], offset: number): { line: number; column: number } {
  let line = 1;
  while (line < lines.length && lines[line]! <= offset) line++;
  const start = lines[line - 1]!;
  return { line, column: codePoints(source.slice(start, offset)) + 1 };
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Right after the last character that is not white space: where `<eof>` is, as a reader sees it. */
function endOfText(source: string): number {
  let end = source.length;
  while (end > 0 && isSpace(source[end - 1]!)) end--;
  return end;
}

function firstNonBlank(source: string, start: number): number {
  let at = start;
  while (at < source.length && (source[at] === ' ' || source[at] === '\t' || source[at] === '\v' || source[at] === '\f')) at++;
  return at;
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\v' || c === '\f';
}

// ---------------------------------------------------------------------------------------
// A lexer after Lua 5.4's llex.c, enough to find tokens and the text Lua's messages give them

interface Token {
  start: number;
  end: number;
  /** The line the token ends on: the one Lua names when it stops at it. */
  endLine: number;
  /** The source text as written. */
  raw: string;
  /** The text as Lua's lexer buffers it (a short string's escapes decoded), when that differs from raw. */
  buffered: string;
  kind: 'name' | 'number' | 'string' | 'symbol' | 'other';
}

const SYMBOLS = ['...', '..', '==', '>=', '<=', '~=', '::', '<<', '>>', '//'];
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', '\\': '\\', '"': '"', "'": "'" };

function lexTokens(source: string): Token[] {
  const tokens: Token[] = [];
  const starts = lineStarts(source);
  let lineIndex = 0;
  const lineOf = (offset: number): number => {
    while (lineIndex + 1 < starts.length && starts[lineIndex + 1]! <= offset) lineIndex++;
    return lineIndex + 1;
  };
  const push = (start: number, end: number, kind: Token['kind'], buffered?: string) => {
    const raw = source.slice(start, end);
    // The line of the token's last character (a token never ends on a newline it did not consume).
    tokens.push({ start, end, endLine: lineOf(Math.max(start, end - 1)), raw, buffered: buffered ?? raw, kind });
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '-' && source[i + 1] === '-') {
      const long = longBracket(source, i + 2);
      if (long !== null) i = closeLongBracket(source, long.after, long.level) ?? source.length;
      else {
        i += 2;
        while (i < source.length && source[i] !== '\n' && source[i] !== '\r') i++;
      }
      continue;
    }
    if (c === '[') {
      const long = longBracket(source, i);
      if (long !== null) {
        const end = closeLongBracket(source, long.after, long.level) ?? source.length;
        push(i, end, 'string');
        i = end;
        continue;
      }
    }
    if (c === '"' || c === "'") {
      const { end, buffered } = shortString(source, i);
      push(i, end, 'string', buffered);
      i = end;
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(source[i + 1] ?? ''))) {
      const end = numeral(source, i);
      push(i, end, 'number');
      i = end;
      continue;
    }
    if (isAlpha(c)) {
      let end = i + 1;
      while (end < source.length && (isAlpha(source[end]!) || isDigit(source[end]!))) end++;
      push(i, end, 'name');
      i = end;
      continue;
    }
    const symbol = SYMBOLS.find((s) => source.startsWith(s, i));
    if (symbol !== undefined) {
      push(i, i + symbol.length, 'symbol');
      i += symbol.length;
      continue;
    }
    const point = source.codePointAt(i)!;
    const width = point > 0xffff ? 2 : 1;
    // Lua reads bytes: a character outside printable ASCII is named by its first byte, `<\195>`.
    const printable = point >= 0x20 && point < 0x7f;
    push(i, i + width, printable ? 'symbol' : 'other', printable ? c : `<\\${firstUtf8Byte(point)}>`);
    i += width;
  }
  return tokens;
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

function isAlpha(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
}

function isHexDigit(c: string): boolean {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

function firstUtf8Byte(point: number): number {
  if (point < 0x80) return point;
  if (point < 0x800) return 0xc0 | (point >> 6);
  if (point < 0x10000) return 0xe0 | (point >> 12);
  return 0xf0 | (point >> 18);
}

/** `[`, `=`*level, `[` at `at`: the level and where the content starts; else null. */
function longBracket(source: string, at: number): { level: number; after: number } | null {
  if (source[at] !== '[') return null;
  let i = at + 1;
  while (source[i] === '=') i++;
  return source[i] === '[' ? { level: i - at - 1, after: i + 1 } : null;
}

/** The index after the `]`, `=`*level, `]` closing a long bracket opened before `from`; null when unfinished. */
function closeLongBracket(source: string, from: number, level: number): number | null {
  const close = `]${'='.repeat(level)}]`;
  const at = source.indexOf(close, from);
  return at < 0 ? null : at + close.length;
}

/** A short string from its quote: where it ends (its closing quote, or where Lua gives up) and its buffered text. */
function shortString(source: string, start: number): { end: number; buffered: string } {
  const quote = source[start]!;
  let buffered = quote;
  let i = start + 1;
  while (i < source.length) {
    const c = source[i]!;
    if (c === quote) return { end: i + 1, buffered: buffered + c };
    if (c === '\n' || c === '\r') return { end: i, buffered };
    if (c !== '\\') {
      buffered += c;
      i++;
      continue;
    }
    const e = source[i + 1];
    if (e === undefined) return { end: i + 1, buffered: buffered + c };
    if (Object.hasOwn(ESCAPES, e)) {
      buffered += ESCAPES[e];
      i += 2;
    } else if (e === '\n' || e === '\r') {
      buffered += '\n';
      i += 2;
      if ((source[i] === '\n' || source[i] === '\r') && source[i] !== e) i++;
    } else if (e === 'z') {
      i += 2;
      while (i < source.length && isSpace(source[i]!)) i++;
    } else if (e === 'x' && isHexDigit(source[i + 2] ?? '') && isHexDigit(source[i + 3] ?? '')) {
      buffered += String.fromCharCode(parseInt(source.slice(i + 2, i + 4), 16));
      i += 4;
    } else if (isDigit(e)) {
      let j = i + 1;
      while (j < i + 4 && isDigit(source[j] ?? '')) j++;
      buffered += String.fromCharCode(Number(source.slice(i + 1, j)) & 0xff);
      i = j;
    } else {
      // An escape Lua refuses (or \u{...}): the message shows the text so far and the escape as written.
      buffered += c + e;
      i += 2;
    }
  }
  return { end: i, buffered };
}

/** The end of a numeral from `start`, read as llex.c's read_numeral reads one (touching a letter, it takes it too). */
function numeral(source: string, start: number): number {
  let i = start;
  const hex = source[i] === '0' && (source[i + 1] === 'x' || source[i + 1] === 'X');
  const exponent = hex ? 'Pp' : 'Ee';
  if (hex) i += 2;
  for (;;) {
    const c = source[i] ?? '';
    if (c !== '' && exponent.includes(c)) {
      i++;
      if (source[i] === '+' || source[i] === '-') i++;
    } else if (isHexDigit(c) || c === '.') i++;
    else break;
  }
  if (isAlpha(source[i] ?? '')) i++;
  return i;
}

/** Whether a token is the one a message names as `near 'text'`. */
function matches(token: Token, text: string): boolean {
  if (token.kind !== 'string') return token.buffered === text || token.raw === text;
  // A string Lua stopped inside (unfinished, a bad escape) is named by its text so far.
  return token.buffered === text || token.raw === text || (text.length > 1 && (token.buffered.startsWith(text) || token.raw.startsWith(text)));
}
