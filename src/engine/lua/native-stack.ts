/**
 * What a native C function to Lua (pattern-natives.ts, size-guards.ts) needs of the C API, and
 * how it reads its arguments and pushes its results and errors, as lstrlib.c's luaL_* helpers do.
 */
/** The C functions the natives call, by their C names. */
export const NATIVE_C_FUNCTIONS = [
  'luaL_where',
  'lua_concat',
  'lua_error',
  'lua_pushlstring',
  'luaL_checklstring',
  'luaL_optinteger',
  'lua_pushinteger',
  'lua_pushnil',
  'luaL_checkstack',
  'lua_toboolean',
  'lua_settop',
  'lua_tolstring',
  'lua_tointegerx',
  'lua_copy',
  'lua_type',
  'luaL_typeerror',
  'lua_pushvalue',
  'lua_callk',
  'lua_gettable',
  'lua_isstring',
  'lua_typename',
  'lua_rotate',
  'lua_newuserdatauv',
  'lua_touserdata',
  'lua_tocfunction',
  'luaL_checkinteger',
  'luaL_optlstring',
  'lua_gettop',
  'lua_getfield',
  'malloc',
  'free',
] as const;

/** Those C functions, as the wasm module exports them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type NativeCApi = Record<(typeof NATIVE_C_FUNCTIONS)[number], (...args: any[]) => any>;

/** What a native needs of the platform: the C API, the heap, and the stop. */
export interface NativeHost {
  readonly c: NativeCApi;
  heap(): Uint8Array;
  /** A word for out-parameters (a string's length). */
  readonly lengthWord: number;
  /** A constant NUL-terminated name, made once. */
  name(text: string): number;
  /** A buffer of at least `size` bytes, valid until the next call. */
  scratchBuffer(size: number): number;
  /** Pushes the closure that calls native `index` of the VM, with `extra` upvalues already pushed. */
  pushNative(state: number, vmId: number, index: number, extra: number): void;
  /** Raises the runtime's stop in `state` now and at every later instruction. */
  raiseStop(state: number): never;
  /** Calls the C function at `pointer` in the native's own call frame (so its messages are its own). */
  callC(pointer: number, state: number): number;
}

/** What a native needs of its VM: the meter and the heap cap. */
export interface NativeVm {
  readonly id: number;
  readonly memoryLimit: number | undefined;
  /** Pattern steps counted and not yet charged (carried between calls). */
  patternSteps: number;
  /** Charges instructions; true when the run must stop. */
  charge(count: number): boolean;
}

/** luaL_error: the message after the caller's position. */
export function raise(host: NativeHost, state: number, message: string): never {
  const c = host.c;
  c.luaL_where(state, 1);
  pushText(host, state, message);
  c.lua_concat(state, 2);
  c.lua_error(state);
  throw new Error('unreachable: lua_error returned');
}

/** Pushes a JS string as a Lua string (through the scratch buffer). */
export function pushText(host: NativeHost, state: number, text: string): void {
  const bytes = new TextEncoder().encode(text);
  const pointer = host.scratchBuffer(bytes.length + 1);
  host.heap().set(bytes, pointer);
  host.c.lua_pushlstring(state, pointer, bytes.length);
}

/** luaL_checklstring: the string's address and length (it may convert a number in place). */
export function checkString(host: NativeHost, state: number, arg: number): [pointer: number, length: number] {
  const pointer = host.c.luaL_checklstring(state, arg, host.lengthWord) as number;
  return [pointer, lengthOut(host)];
}

/** The length a C call left in the length word (a size_t out-parameter). */
export function lengthOut(host: NativeHost): number {
  const heap = host.heap();
  const at = host.lengthWord;
  return (heap[at]! | (heap[at + 1]! << 8) | (heap[at + 2]! << 16) | (heap[at + 3]! << 24)) >>> 0;
}

/** lstrlib's posrelatI on luaL_optinteger, in wasm32's size_t (so 2^32 + 1 is 1, as in C). */
export function startIndex(host: NativeHost, state: number, arg: number, length: number): number {
  // Absent or nil: the default, without the call (and the BigInt it answers).
  if ((host.c.lua_type(state, arg) as number) <= 0) return 0;
  const pos = host.c.luaL_optinteger(state, arg, 1n) as bigint;
  let start: number;
  if (pos > 0n) start = Number(BigInt.asUintN(32, pos));
  else if (pos === 0n) start = 1;
  else if (pos < -BigInt(length)) start = 1;
  else start = length + Number(pos) + 1;
  // init = posrelatI(...) - 1, as an unsigned 32-bit value.
  return (start - 1) >>> 0;
}

/** Pushes an integer result. */
export function pushInteger(host: NativeHost, state: number, value: number): void {
  host.c.lua_pushinteger(state, value >= 0 && value < SMALL.length ? SMALL[value]! : BigInt(value));
}

// lua_pushinteger takes a BigInt; positions are mostly small, and a table saves making one.
const SMALL = Array.from({ length: 4096 }, (_, n) => BigInt(n));

/** Pushes lstrlib's fail (nil); answers one result. */
export function pushFail(host: NativeHost, state: number): number {
  host.c.lua_pushnil(state);
  return 1;
}
