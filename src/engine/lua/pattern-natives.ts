/**
 * The sandbox's string.find, match, gmatch and gsub: C functions to Lua (they are the
 * platform's trampoline), written against the C API the way lstrlib.c writes them, so
 * arguments, results and every error message are Lua's own (luaL_checklstring and friends
 * run in the same call frame). Only the matching differs: lua-pattern.ts, metered, charges
 * its steps to the run's budget through the VM's count hook and ends the call with the
 * runtime's stop value when the run must stop.
 */
import { CAP_POSITION, CAP_UNFINISHED, MatchState, PatternError, match, memFind, noSpecials } from './lua-pattern.ts';
import { LUA_TFUNCTION, LUA_TNUMBER, LUA_TSTRING, LUA_TTABLE, upvalue } from './lua-constants.ts';
import { checkString, lengthOut, pushFail, pushInteger, pushText, raise, startIndex, type NativeHost, type NativeVm } from './native-stack.ts';
import { move, rep } from './size-guards.ts';

/**
 * Which native a closure is: a pattern function, or a library function whose C loop no
 * memory bound ends (`string.rep('', 1e15)` loops 10^15 times making nothing; `table.move`
 * over absent elements likewise), which checks and charges before it calls the C one.
 */
export type PatternNative = 'find' | 'match' | 'gmatch' | 'gmatch_step' | 'gsub' | 'rep' | 'move';

/**
 * What a match step costs in instructions: measured, a step takes about twice the time of a
 * Lua instruction, so the budget ends a runaway pattern in the time it ends a runaway loop.
 */
const INSTRUCTIONS_PER_STEP = 2;
/** Steps charged at once: the count hook's interval in instructions, and nothing per call. */
const CHARGE_EVERY = 5_000;

/** Thrown inside a match when the run must stop; turned into the runtime's stop value. */
class Stopping extends Error {}

/** Runs one pattern native in `state`; answers its count of results, or raises in Lua. */
export function callPatternNative(host: NativeHost, vm: NativeVm, state: number, which: PatternNative): number {
  // States are reused (a gsub callback may match again, so one per depth of nesting).
  const ms: MatchState & { vm?: NativeVm } =
    idle.pop() ??
    new MatchState(CHARGE_EVERY, () => {
      if (ms.vm!.charge(CHARGE_EVERY * INSTRUCTIONS_PER_STEP)) throw new Stopping();
    });
  ms.vm = vm;
  ms.steps = vm.patternSteps;
  try {
    switch (which) {
      case 'find':
        return findAux(host, ms, state, true);
      case 'match':
        return findAux(host, ms, state, false);
      case 'gmatch':
        return gmatch(host, vm, state);
      case 'gmatch_step':
        return gmatchStep(host, ms, state);
      case 'gsub':
        return gsub(host, vm, ms, state);
      case 'rep':
        return rep(host, state);
      case 'move':
        return move(host, vm, state);
    }
  } catch (error) {
    if (error instanceof Stopping) host.raiseStop(state);
    if (error instanceof PatternError) raise(host, state, error.message);
    // Lua's own errors (a bad argument, an error in a replacement function) unwind on.
    throw error;
  } finally {
    vm.patternSteps = ms.steps;
    ms.vm = undefined;
    idle.push(ms);
  }
}

const idle: (MatchState & { vm?: NativeVm })[] = [];

/** Pushes capture i (or the whole match when there are none and i is 0). */
function pushCapture(host: NativeHost, ms: MatchState, state: number, i: number, s: number, e: number): void {
  if (i >= ms.level) {
    if (i !== 0) throw new PatternError(`invalid capture index %${i + 1}`);
    host.c.lua_pushlstring(state, s, e - s);
    return;
  }
  const length = ms.captureLen[i]!;
  if (length === CAP_UNFINISHED) throw new PatternError('unfinished capture');
  if (length === CAP_POSITION) pushInteger(host, state, ms.captureInit[i]! - ms.srcInit + 1);
  else host.c.lua_pushlstring(state, ms.captureInit[i]!, length);
}

/** Pushes every capture (the whole match when there are none and `whole`); answers how many. */
function pushCaptures(host: NativeHost, ms: MatchState, state: number, s: number, e: number, whole: boolean): number {
  const levels = ms.level === 0 && whole ? 1 : ms.level;
  host.c.luaL_checkstack(state, levels, host.name('too many captures'));
  for (let i = 0; i < levels; i++) pushCapture(host, ms, state, i, s, e);
  return levels;
}

function findAux(host: NativeHost, ms: MatchState, state: number, find: boolean): number {
  const c = host.c;
  const [s, ls] = checkString(host, state, 1);
  let [p, lp] = checkString(host, state, 2);
  const init = startIndex(host, state, 3, ls);
  if (init > ls) return pushFail(host, state);
  const heap = host.heap();
  ms.prepare(heap, s, s + ls, p + lp);
  if (find && (c.lua_toboolean(state, 4) !== 0 || noSpecials(heap, p, p + lp))) {
    const found = memFind(ms, s + init, ls - init, p, lp);
    if (found === -1) return pushFail(host, state);
    pushInteger(host, state, found - s + 1);
    pushInteger(host, state, found - s + lp);
    return 2;
  }
  let s1 = s + init;
  const anchor = heap[p] === 0x5e;
  if (anchor) {
    p++;
    lp--;
  }
  ms.prepare(heap, s, s + ls, p + lp);
  do {
    ms.level = 0;
    const res = match(ms, s1, p);
    if (res !== -1) {
      if (find) {
        pushInteger(host, state, s1 - s + 1);
        pushInteger(host, state, res - s);
        return pushCaptures(host, ms, state, 0, 0, false) + 2;
      }
      return pushCaptures(host, ms, state, s1, res, true);
    }
  } while (s1++ < ms.srcEnd && !anchor);
  return pushFail(host, state);
}

// gmatch's iterator keeps its state in upvalues 3 to 5: subject, pattern, and a userdata of
// two int32 words: the next start and the end of the last match (-1 for none), as offsets
// into the subject.
function gmatch(host: NativeHost, vm: NativeVm, state: number): number {
  const c = host.c;
  const [, ls] = checkString(host, state, 1);
  checkString(host, state, 2);
  let init = startIndex(host, state, 3, ls);
  if (init > ls) init = ls + 1;
  c.lua_settop(state, 2);
  const words = c.lua_newuserdatauv(state, 8, 0) as number;
  const view = new Int32Array(host.heap().buffer, words, 2);
  view[0] = init;
  view[1] = -1;
  host.pushNative(state, vm.id, NATIVE_INDEX.gmatch_step, 3);
  return 1;
}

function gmatchStep(host: NativeHost, ms: MatchState, state: number): number {
  const c = host.c;
  const s = c.lua_tolstring(state, upvalue(3), host.lengthWord) as number;
  const ls = lengthOut(host);
  const p = c.lua_tolstring(state, upvalue(4), host.lengthWord) as number;
  const lp = lengthOut(host);
  const words = (c.lua_touserdata(state, upvalue(5)) as number) >> 2;
  const heap = host.heap();
  const from = new Int32Array(heap.buffer)[words]!;
  const lastOffset = new Int32Array(heap.buffer)[words + 1]!;
  const lastMatch = lastOffset < 0 ? -1 : s + lastOffset;
  ms.prepare(heap, s, s + ls, p + lp);
  for (let src = s + from; src <= ms.srcEnd; src++) {
    ms.level = 0;
    const e = match(ms, src, p);
    if (e !== -1 && e !== lastMatch) {
      const state32 = new Int32Array(host.heap().buffer);
      state32[words] = state32[words + 1] = e - s;
      return pushCaptures(host, ms, state, src, e, true);
    }
  }
  return 0;
}

/** gsub's result, built in JS: bytes, grown by doubling, capped at the VM's heap limit. */
class Output {
  bytes = new Uint8Array(256);
  length = 0;
  constructor(private readonly cap: number) {}

  add(heap: Uint8Array, from: number, count: number): void {
    this.reserve(count);
    this.bytes.set(heap.subarray(from, from + count), this.length);
    this.length += count;
  }

  addByte(byte: number): void {
    this.reserve(1);
    this.bytes[this.length++] = byte;
  }

  addText(text: string): void {
    for (let i = 0; i < text.length; i++) this.addByte(text.charCodeAt(i));
  }

  private reserve(count: number): void {
    const needed = this.length + count;
    if (needed <= this.bytes.length) return;
    // The C gsub's buffer lives in the Lua heap and fails there; this one fails at the same cap.
    if (needed > this.cap) throw new OutOfMemory();
    let size = this.bytes.length * 2;
    while (size < needed) size *= 2;
    const grown = new Uint8Array(Math.min(size, Math.max(needed, this.cap)));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}

class OutOfMemory extends Error {}

function gsub(host: NativeHost, vm: NativeVm, ms: MatchState, state: number): number {
  const c = host.c;
  let [src, srcl] = checkString(host, state, 1);
  let [p, lp] = checkString(host, state, 2);
  const tr = c.lua_type(state, 3) as number;
  const maxS = c.luaL_optinteger(state, 4, BigInt(srcl + 1)) as bigint;
  if (!(tr === LUA_TNUMBER || tr === LUA_TSTRING || tr === LUA_TFUNCTION || tr === LUA_TTABLE)) {
    c.luaL_typeerror(state, 3, host.name('string/function/table'));
  }
  let heap = host.heap();
  const anchor = heap[p] === 0x5e;
  if (anchor) {
    p++;
    lp--;
  }
  // A string replacement, read once (a number becomes a string in place, as lua_tolstring does).
  let replacement = 0;
  let replacementLength = 0;
  if (tr === LUA_TNUMBER || tr === LUA_TSTRING) {
    replacement = c.lua_tolstring(state, 3, host.lengthWord) as number;
    replacementLength = lengthOut(host);
  }
  heap = host.heap();
  const out = new Output(vm.memoryLimit ?? Number.MAX_SAFE_INTEGER);
  let lastMatch = -1;
  let n = 0n;
  let changed = false;
  ms.prepare(heap, src, src + srcl, p + lp);
  try {
    while (n < maxS) {
      ms.level = 0;
      const e = match(ms, src, p);
      if (e !== -1 && e !== lastMatch) {
        n++;
        if (tr === LUA_TFUNCTION || tr === LUA_TTABLE) {
          changed = addCalled(host, ms, state, out, src, e, tr) || changed;
          // Lua ran: the heap may have grown, and its view with it.
          heap = host.heap();
          ms.heap = heap;
        } else {
          addString(host, ms, out, replacement, replacementLength, src, e);
          changed = true;
        }
        src = lastMatch = e;
      } else if (src < ms.srcEnd) {
        out.addByte(heap[src++]!);
      } else break;
      if (anchor) break;
    }
    if (!changed) c.lua_pushvalue(state, 1);
    else {
      out.add(heap, src, ms.srcEnd - src);
      pushBytes(host, state, out);
    }
  } catch (error) {
    if (error instanceof OutOfMemory) {
      pushText(host, state, 'not enough memory');
      c.lua_error(state);
    }
    throw error;
  }
  pushInteger(host, state, Number(n));
  return 2;
}

/** lstrlib's add_s: the replacement string with %0-%9 and %% expanded. */
function addString(host: NativeHost, ms: MatchState, out: Output, news: number, l: number, s: number, e: number): void {
  const heap = ms.heap;
  const end = news + l;
  let at = news;
  while (at < end) {
    const ch = heap[at]!;
    if (ch !== 0x25) {
      out.addByte(ch);
      at++;
      continue;
    }
    // A '%' at the very end reads the string's NUL, as C does.
    const next = heap[at + 1]!;
    if (next === 0x25) out.addByte(0x25);
    else if (next === 0x30) out.add(heap, s, e - s);
    else if (next >= 0x30 && next <= 0x39) {
      const i = next - 0x31;
      if (i >= ms.level) {
        if (i !== 0) throw new PatternError(`invalid capture index %${i + 1}`);
        out.add(heap, s, e - s);
      } else {
        const length = ms.captureLen[i]!;
        if (length === CAP_UNFINISHED) throw new PatternError('unfinished capture');
        if (length === CAP_POSITION) out.addText(String(ms.captureInit[i]! - ms.srcInit + 1));
        else out.add(heap, ms.captureInit[i]!, length);
      }
    } else throw new PatternError("invalid use of '%' in replacement string");
    at += 2;
  }
  ms.spend(l);
}

/** lstrlib's add_value for a function or table: calls or indexes, then adds what it gave. */
function addCalled(host: NativeHost, ms: MatchState, state: number, out: Output, s: number, e: number, tr: number): boolean {
  const c = host.c;
  if (tr === LUA_TFUNCTION) {
    c.lua_pushvalue(state, 3);
    const n = pushCaptures(host, ms, state, s, e, true);
    c.lua_callk(state, n, 1, 0, 0);
  } else {
    pushCapture(host, ms, state, 0, s, e);
    c.lua_gettable(state, 3);
  }
  const heap = host.heap();
  if (c.lua_toboolean(state, -1) === 0) {
    c.lua_settop(state, -2);
    out.add(heap, s, e - s);
    return false;
  }
  if (c.lua_isstring(state, -1) === 0) {
    const type = c.lua_type(state, -1) as number;
    const typeName = c.lua_typename(state, type) as number;
    throw new PatternError(`invalid replacement value (a ${cString(heap, typeName)})`);
  }
  const pointer = c.lua_tolstring(state, -1, host.lengthWord) as number;
  out.add(host.heap(), pointer, lengthOut(host));
  c.lua_settop(state, -2);
  return true;
}

function cString(heap: Uint8Array, pointer: number): string {
  let text = '';
  for (let at = pointer; heap[at] !== 0; at++) text += String.fromCharCode(heap[at]!);
  return text;
}

function pushBytes(host: NativeHost, state: number, out: Output): void {
  const c = host.c;
  // Large results through a block of their own, freed at once: the scratch buffer keeps its size.
  const large = out.length > 64 * 1024;
  const pointer = large ? (c.malloc(out.length + 1) as number) : host.scratchBuffer(out.length + 1);
  if (pointer === 0) throw new OutOfMemory();
  host.heap().set(out.bytes.subarray(0, out.length), pointer);
  try {
    c.lua_pushlstring(state, pointer, out.length);
  } finally {
    if (large) c.free(pointer);
  }
}

/** The leaf index of each native, as the trampoline dispatches them (below every other leaf). */
export const NATIVE_INDEX: Record<PatternNative, number> = {
  find: -10,
  match: -11,
  gmatch: -12,
  gmatch_step: -13,
  gsub: -14,
  rep: -15,
  move: -16,
};

/** The native a leaf index stands for, or undefined. */
export function nativeOf(index: number): PatternNative | undefined {
  return NATIVES_BY_INDEX.get(index);
}

const NATIVES_BY_INDEX = new Map(Object.entries(NATIVE_INDEX).map(([name, index]) => [index, name as PatternNative]));
