/**
 * Values across the boundary: scalars only (nil, booleans, numbers, text), pushed onto and
 * read from a Lua stack; structured data crosses as JSON text. Text crosses as UTF-8 with an
 * explicit length, so NUL bytes inside it survive.
 */
import type { CApi, LuaState, Pointer } from './c-api.ts';
import { LUA_TBOOLEAN, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING } from './lua-constants.ts';

/** A value that may cross between JS and Lua. */
export type LuaScalar = string | number | boolean | null;

/** What pushing and reading values needs of the platform. */
export interface ValueHost {
  readonly c: CApi;
  /** A word for out-parameters (a string's length). */
  readonly lengthWord: Pointer;
  /** A buffer of at least `size` bytes for text on its way into Lua (copied there at once); 0 when the heap has no room. */
  scratchBuffer(size: number): Pointer;
}

/**
 * Makes the scratch buffer big enough for every string of `values`, before any is pushed;
 * false when the wasm heap has no room for it. Pushing then never grows it: inside a call
 * into Lua a failed malloc could not be reported, and text would be written at address 0.
 */
export function reserveScratch(host: ValueHost, values: readonly LuaScalar[]): boolean {
  let longest = -1;
  for (const value of values) if (typeof value === 'string' && value.length > longest) longest = value.length;
  return longest < 0 || host.scratchBuffer(longest * 3 + 1) !== 0;
}

/** Makes room for `count` more values on a Lua stack (beyond the 20 the C API guarantees). */
export function ensureStack(host: ValueHost, state: LuaState, count: number): void {
  if (!host.c.checkstack(state, count)) throw new Error(`${count} values do not fit a Lua stack`);
}

// lua_pushinteger takes a BigInt; the counts and positions an answer carries are small, and
// taking theirs from a table saves making one per value.
const SMALL_INTEGERS = Array.from({ length: 1024 }, (_, n) => BigInt(n));

/** Pushes one scalar onto a Lua stack. */
export function pushScalar(host: ValueHost, state: LuaState, value: LuaScalar): void {
  const c = host.c;
  if (value === null) c.pushnil(state);
  else if (typeof value === 'boolean') c.pushboolean(state, value ? 1 : 0);
  else if (typeof value === 'number') {
    if (Number.isInteger(value) && Number.isSafeInteger(value))
      c.pushinteger(state, value >= 0 && value < SMALL_INTEGERS.length ? SMALL_INTEGERS[value]! : BigInt(value));
    else c.pushnumber(state, value);
  } else {
    // Through a scratch buffer with an explicit length, so NUL bytes inside text survive.
    const pointer = host.scratchBuffer(value.length * 3 + 1);
    const heap = host.c.heap;
    c.pushlstring(
      state,
      pointer,
      value.length <= SHORT_TEXT_OUT
        ? writeShortText(value, heap, pointer)
        : encoder.encodeInto(value, heap.subarray(pointer, pointer + value.length * 3 + 1)).written,
    );
  }
}

/**
 * At these lengths or less, text crosses between JS and Lua faster byte by byte than through
 * TextEncoder or TextDecoder, whose every call costs 0.1-0.2 us whatever the length (ids,
 * tool names and results, numbers as text: most of what a model round hands over). Measured
 * in Node and in workerd: writing by hand costs about 2.5 ns a character, reading about 6.
 */
const SHORT_TEXT_OUT = 32;
const SHORT_TEXT_IN = 16;

/** Writes short text's UTF-8 at `pointer`; answers the byte count. */
function writeShortText(text: string, heap: Uint8Array, pointer: number): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return encoder.encodeInto(text, heap.subarray(pointer, pointer + text.length * 3 + 1)).written;
    heap[pointer + i] = code;
  }
  return text.length;
}

/** Short text from its UTF-8 bytes at `pointer`. */
function readShortText(heap: Uint8Array, pointer: number, length: number): string {
  let text = '';
  for (let i = pointer; i < pointer + length; i++) {
    const code = heap[i]!;
    if (code >= 0x80) return decoder.decode(heap.subarray(pointer, pointer + length));
    text += String.fromCharCode(code);
  }
  return text;
}

/** The scalars at stack positions `from` to `to`. */
export function readValues(host: ValueHost, state: LuaState, from: number, to: number): LuaScalar[] {
  const values: LuaScalar[] = [];
  for (let index = from; index <= to; index++) values.push(readScalar(host, state, index));
  return values;
}

const decoder = new TextDecoder();

/** The scalar at a stack position; a value of another type reads as `<its type name>`. */
export function readScalar(host: ValueHost, state: LuaState, index: number): LuaScalar {
  const c = host.c;
  const type = c.type(state, index);
  switch (type) {
    case LUA_TNIL:
      return null;
    case LUA_TBOOLEAN:
      return c.toboolean(state, index) !== 0;
    case LUA_TNUMBER:
      // An integer too: as a double, rounded as Number(BigInt) would round it, with no BigInt made.
      return c.tonumberx(state, index, 0) as number;
    case LUA_TSTRING: {
      const pointer = c.tolstring(state, index, host.lengthWord) as number;
      const length = c.words[host.lengthWord >> 2]!;
      const heap = c.heap;
      return length <= SHORT_TEXT_IN ? readShortText(heap, pointer, length) : decoder.decode(heap.subarray(pointer, pointer + length));
    }
    default:
      return `<${c.lua.lua_typename(state, type)}>`;
  }
}

/** A view of a Lua string's bytes in the wasm heap (valid until Lua runs again). */
export function luaBytes(host: ValueHost, state: LuaState, index: number): Uint8Array {
  const pointer = host.c.tolstring(state, index, host.lengthWord) as number;
  const length = host.c.words[host.lengthWord >> 2]!;
  return host.c.heap.subarray(pointer, pointer + length);
}

const encoder = new TextEncoder();

/** Calls `use` with a NUL-terminated copy of `text` in the wasm heap, freed after. */
export function withCString<T>(c: CApi, text: string, use: (pointer: Pointer, size: number) => T): T {
  const bytes = encoder.encode(text);
  const pointer = c.malloc(bytes.length + 1);
  try {
    c.heap.set(bytes, pointer);
    c.heap[pointer + bytes.length] = 0;
    return use(pointer, bytes.length);
  } finally {
    c.free(pointer);
  }
}
