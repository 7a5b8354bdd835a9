/**
 * Lua 5.4's pattern matcher (lstrlib.c's `match`), ported to work on a string's bytes where
 * they lie in the wasm heap, and metered: the C matcher backtracks without bound and cannot
 * be interrupted (a 60-byte subject held the isolate for over a minute), so every step here
 * is counted and `MatchState.check` charges the count to the run's budget as it grows.
 *
 * Positions are absolute offsets into `heap`. A Lua string is followed by a NUL byte, which
 * C reads at the end of the subject (`%f`, `%b`) and of the pattern: so does this port.
 */

/** A pattern error, with Lua's own message ("malformed pattern (ends with '%')"...). */
export class PatternError extends Error {}

/** Captures a pattern may hold (LUA_MAXCAPTURES). */
export const MAX_CAPTURES = 32;
/** lstrlib's MAXCCALLS: how deep `match` may recurse before "pattern too complex". */
const MAX_DEPTH = 200;
/** A capture opened and not yet closed. */
export const CAP_UNFINISHED = -1;
/** A position capture `()`. */
export const CAP_POSITION = -2;

const L_ESC = 0x25; // '%'
const SPECIALS = new Uint8Array(256);
for (const ch of '^$*+?.([%-') SPECIALS[ch.charCodeAt(0)] = 1;

/** One match in progress: lstrlib's MatchState, plus the step meter. */
export class MatchState {
  heap: Uint8Array = new Uint8Array(0);
  srcInit = 0;
  srcEnd = 0;
  pEnd = 0;
  depth = MAX_DEPTH;
  level = 0;
  readonly captureInit = new Int32Array(MAX_CAPTURES);
  readonly captureLen = new Int32Array(MAX_CAPTURES);
  /** Steps counted since the last charge; `check` runs when it reaches `checkEvery`. */
  steps = 0;

  constructor(
    /** Steps between two charges. */
    readonly checkEvery: number,
    /** Charges `checkEvery` steps to the budget; throws to end the match when the run must stop. */
    readonly check: () => void,
  ) {}

  /** Prepares for matching a subject [srcInit, srcEnd) against a pattern ending at pEnd. */
  prepare(heap: Uint8Array, srcInit: number, srcEnd: number, pEnd: number): void {
    this.heap = heap;
    this.srcInit = srcInit;
    this.srcEnd = srcEnd;
    this.pEnd = pEnd;
    this.depth = MAX_DEPTH;
    this.level = 0;
  }

  /** Counts `n` steps of work. */
  spend(n: number): void {
    this.steps += n;
    while (this.steps >= this.checkEvery) {
      this.steps -= this.checkEvery;
      this.check();
    }
  }
}

/** True when the pattern bytes [p, pEnd) hold none of `^$*+?.([%-` (lstrlib's nospecials). */
export function noSpecials(heap: Uint8Array, p: number, pEnd: number): boolean {
  for (let i = p; i < pEnd; i++) if (SPECIALS[heap[i]!] === 1) return false;
  return true;
}

/**
 * The first occurrence of the bytes [p, p + lp) in [s, s + ls), as an absolute offset, or -1
 * (lstrlib's lmemfind). Metered too: a plain search is quadratic at worst.
 */
export function memFind(ms: MatchState, s: number, ls: number, p: number, lp: number): number {
  const heap = ms.heap;
  if (lp === 0) return s;
  if (lp > ls) return -1;
  const first = heap[p]!;
  const last = s + ls - lp;
  const view = heap.subarray(s, last + 1);
  let at = 0;
  for (;;) {
    const found = view.indexOf(first, at);
    if (found < 0) {
      ms.spend(view.length - at);
      return -1;
    }
    ms.spend(found - at + lp);
    let k = 1;
    const start = s + found;
    while (k < lp && heap[start + k] === heap[p + k]) k++;
    if (k === lp) return start;
    at = found + 1;
  }
}

function fail(message: string): never {
  throw new PatternError(message);
}

function checkCapture(ms: MatchState, l: number): number {
  l -= 0x31; // '1'
  if (l < 0 || l >= ms.level || ms.captureLen[l] === CAP_UNFINISHED) fail(`invalid capture index %${l + 1}`);
  return l;
}

function captureToClose(ms: MatchState): number {
  for (let level = ms.level - 1; level >= 0; level--) if (ms.captureLen[level] === CAP_UNFINISHED) return level;
  return fail('invalid pattern capture');
}

function classEnd(ms: MatchState, p: number): number {
  const heap = ms.heap;
  const c = heap[p++]!;
  if (c === L_ESC) {
    if (p === ms.pEnd) fail("malformed pattern (ends with '%')");
    return p + 1;
  }
  if (c === 0x5b) {
    // '['
    if (heap[p] === 0x5e) p++; // '^'
    do {
      if (p === ms.pEnd) fail("malformed pattern (missing ']')");
      if (heap[p++] === L_ESC && p < ms.pEnd) p++;
    } while (heap[p] !== 0x5d); // ']'
    return p + 1;
  }
  return p;
}

/** Lua's match_class on a byte, with the C locale's character classes. */
function matchClass(c: number, cl: number): boolean {
  let res: boolean;
  switch (cl | 0x20) {
    case 0x61:
      res = isAlpha(c);
      break; // a
    case 0x63:
      res = c < 32 || c === 127;
      break; // c
    case 0x64:
      res = c >= 0x30 && c <= 0x39;
      break; // d
    case 0x67:
      res = c > 32 && c < 127;
      break; // g
    case 0x6c:
      res = c >= 0x61 && c <= 0x7a;
      break; // l
    case 0x70:
      res = c > 32 && c < 127 && !isAlnum(c);
      break; // p
    case 0x73:
      res = c === 32 || (c >= 9 && c <= 13);
      break; // s
    case 0x75:
      res = c >= 0x41 && c <= 0x5a;
      break; // u
    case 0x77:
      res = isAlnum(c);
      break; // w
    case 0x78:
      res = (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
      break; // x
    case 0x7a:
      res = c === 0;
      break; // z
    default:
      return cl === c;
  }
  // Only letters reach here: a lower-case class matches, its upper case is the complement.
  return cl >= 0x61 ? res : !res;
}

function isAlpha(c: number): boolean {
  return (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;
}

function isAlnum(c: number): boolean {
  return isAlpha(c) || (c >= 0x30 && c <= 0x39);
}

/** [p, ec] is a set `[...]`, ec at its closing ']'. */
function matchBracketClass(heap: Uint8Array, c: number, p: number, ec: number): boolean {
  let sig = true;
  if (heap[p + 1] === 0x5e) {
    sig = false;
    p++;
  }
  while (++p < ec) {
    const pc = heap[p]!;
    if (pc === L_ESC) {
      p++;
      if (matchClass(c, heap[p]!)) return sig;
    } else if (heap[p + 1] === 0x2d && p + 2 < ec) {
      // '-'
      p += 2;
      if (pc <= c && c <= heap[p]!) return sig;
    } else if (pc === c) return sig;
  }
  return !sig;
}

function singleMatch(ms: MatchState, s: number, p: number, ep: number): boolean {
  if (s >= ms.srcEnd) return false;
  const heap = ms.heap;
  const c = heap[s]!;
  switch (heap[p]) {
    case 0x2e:
      return true; // '.'
    case L_ESC:
      return matchClass(c, heap[p + 1]!);
    case 0x5b:
      return matchBracketClass(heap, c, p, ep - 1);
    default:
      return heap[p] === c;
  }
}

function matchBalance(ms: MatchState, s: number, p: number): number {
  if (p >= ms.pEnd - 1) fail("malformed pattern (missing arguments to '%b')");
  const heap = ms.heap;
  if (heap[s] !== heap[p]) return -1;
  const b = heap[p]!;
  const e = heap[p + 1]!;
  let cont = 1;
  const start = s;
  while (++s < ms.srcEnd) {
    const c = heap[s]!;
    if (c === e) {
      if (--cont === 0) {
        ms.spend(s - start);
        return s + 1;
      }
    } else if (c === b) cont++;
  }
  ms.spend(s - start);
  return -1;
}

function maxExpand(ms: MatchState, s: number, p: number, ep: number): number {
  let i = 0;
  while (singleMatch(ms, s + i, p, ep)) i++;
  ms.spend(i);
  while (i >= 0) {
    const res = match(ms, s + i, ep + 1);
    if (res !== -1) return res;
    i--;
  }
  return -1;
}

function minExpand(ms: MatchState, s: number, p: number, ep: number): number {
  for (;;) {
    const res = match(ms, s, ep + 1);
    if (res !== -1) return res;
    if (singleMatch(ms, s, p, ep)) s++;
    else return -1;
  }
}

function startCapture(ms: MatchState, s: number, p: number, what: number): number {
  const level = ms.level;
  if (level >= MAX_CAPTURES) fail('too many captures');
  ms.captureInit[level] = s;
  ms.captureLen[level] = what;
  ms.level = level + 1;
  const res = match(ms, s, p);
  if (res === -1) ms.level--;
  return res;
}

function endCapture(ms: MatchState, s: number, p: number): number {
  const l = captureToClose(ms);
  ms.captureLen[l] = s - ms.captureInit[l]!;
  const res = match(ms, s, p);
  if (res === -1) ms.captureLen[l] = CAP_UNFINISHED;
  return res;
}

function matchCapture(ms: MatchState, s: number, l: number): number {
  l = checkCapture(ms, l);
  const len = ms.captureLen[l]!;
  const init = ms.captureInit[l]!;
  // A position capture's length is CAP_POSITION: C compares it as a huge size_t, never fits.
  if (len < 0 || ms.srcEnd - s < len) return -1;
  ms.spend(len);
  const heap = ms.heap;
  for (let k = 0; k < len; k++) if (heap[init + k] !== heap[s + k]) return -1;
  return s + len;
}

/**
 * Matches the pattern at p against the subject at s; the end of the match, or -1. A port of
 * lstrlib's `match`, its gotos as a loop.
 */
export function match(ms: MatchState, s: number, p: number): number {
  if (ms.depth-- === 0) fail('pattern too complex');
  if (++ms.steps >= ms.checkEvery) ms.spend(0);
  const heap = ms.heap;
  loop: while (p !== ms.pEnd) {
    const pc = heap[p]!;
    switch (pc) {
      case 0x28: // '('
        s = heap[p + 1] === 0x29 ? startCapture(ms, s, p + 2, CAP_POSITION) : startCapture(ms, s, p + 1, CAP_UNFINISHED);
        break loop;
      case 0x29: // ')'
        s = endCapture(ms, s, p + 1);
        break loop;
      case 0x24: // '$'
        if (p + 1 === ms.pEnd) {
          s = s === ms.srcEnd ? s : -1;
          break loop;
        }
        break;
      case L_ESC: {
        const next = heap[p + 1]!;
        if (next === 0x62) {
          // 'b'
          s = matchBalance(ms, s, p + 2);
          if (s !== -1) {
            p += 4;
            continue;
          }
          break loop;
        }
        if (next === 0x66) {
          // 'f'
          p += 2;
          if (heap[p] !== 0x5b) fail("missing '[' after '%f' in pattern");
          const ep = classEnd(ms, p);
          const previous = s === ms.srcInit ? 0 : heap[s - 1]!;
          if (!matchBracketClass(heap, previous, p, ep - 1) && matchBracketClass(heap, heap[s]!, p, ep - 1)) {
            p = ep;
            continue;
          }
          s = -1;
          break loop;
        }
        if (next >= 0x30 && next <= 0x39) {
          s = matchCapture(ms, s, next);
          if (s !== -1) {
            p += 2;
            continue;
          }
          break loop;
        }
        break;
      }
    }
    // A single character class, with its optional suffix.
    const ep = classEnd(ms, p);
    const suffix = heap[ep];
    if (!singleMatch(ms, s, p, ep)) {
      if (suffix === 0x2a || suffix === 0x3f || suffix === 0x2d) {
        // '*' '?' '-'
        p = ep + 1;
        continue;
      }
      s = -1;
      break;
    }
    switch (suffix) {
      case 0x3f: {
        // '?'
        const res = match(ms, s + 1, ep + 1);
        if (res !== -1) {
          s = res;
          break loop;
        }
        p = ep + 1;
        continue;
      }
      case 0x2b: // '+'
        s = maxExpand(ms, s + 1, p, ep);
        break loop;
      case 0x2a: // '*'
        s = maxExpand(ms, s, p, ep);
        break loop;
      case 0x2d: // '-'
        s = minExpand(ms, s, p, ep);
        break loop;
      default:
        s++;
        p = ep;
        continue;
    }
  }
  ms.depth++;
  return s;
}
