/**
 * The C API binding: the Lua C functions the VM layer calls, with their C types written as
 * TypeScript ones (a lua_State is a LuaState handle, a char* or a function pointer a
 * Pointer, a lua_Integer a bigint). Taken from the wasm instance's exports when they were
 * captured (wasm-exports.ts), else from wasmoon's checked `_`-prefixed wrappers.
 */
import { NATIVE_C_FUNCTIONS, type NativeCApi } from './native-stack.ts';
import type { EmscriptenModule, LuaWasm, WasmExports } from './wasm-exports.ts';

/** A lua_State* in the wasm heap: a VM's main state or one of its threads. */
export type LuaState = number & { readonly __luaState: unique symbol };

/** An address in the wasm heap, or an index in its function table. */
export type Pointer = number;

/** Lua's C functions, as the VM layer calls them. */
export class CApi {
  readonly gettop: (L: LuaState) => number;
  readonly settop: (L: LuaState, index: number) => void;
  readonly type: (L: LuaState, index: number) => number;
  readonly toboolean: (L: LuaState, index: number) => number;
  readonly tointegerx: (L: LuaState, index: number, isnum: Pointer) => bigint;
  readonly tonumberx: (L: LuaState, index: number, isnum: Pointer) => number;
  readonly tolstring: (L: LuaState, index: number, length: Pointer) => Pointer;
  readonly pushnil: (L: LuaState) => void;
  readonly pushboolean: (L: LuaState, b: number) => void;
  readonly pushinteger: (L: LuaState, n: bigint) => void;
  readonly pushnumber: (L: LuaState, n: number) => void;
  readonly pushlstring: (L: LuaState, s: Pointer, length: number) => Pointer;
  readonly pushlightuserdata: (L: LuaState, p: Pointer) => void;
  readonly newuserdatauv: (L: LuaState, size: number, uservalues: number) => Pointer;
  readonly pushcclosure: (L: LuaState, fn: Pointer, upvalues: number) => void;
  readonly setglobal: (L: LuaState, name: Pointer) => void;
  readonly getglobal: (L: LuaState, name: Pointer) => number;
  readonly resume: (L: LuaState, from: LuaState | 0, nargs: number, nresults: Pointer) => number;
  readonly newthread: (L: LuaState) => LuaState;
  readonly loadbufferx: (L: LuaState, buffer: Pointer, size: number, name: Pointer, mode: Pointer) => number;
  readonly pcallk: (L: LuaState, nargs: number, nresults: number, handler: number, context: number, k: Pointer) => number;
  readonly newstate: (alloc: Pointer, ud: number) => LuaState | 0;
  readonly newstateL: () => LuaState;
  readonly getallocf: (L: LuaState, ud: Pointer) => Pointer;
  readonly setallocf: (L: LuaState, alloc: Pointer, ud: number) => void;
  readonly openlibs: (L: LuaState) => void;
  readonly close: (L: LuaState) => void;
  readonly error: (L: LuaState) => number;
  readonly malloc: (size: number) => Pointer;
  readonly free: (pointer: Pointer) => void;
  readonly realloc: (pointer: Pointer, size: number) => Pointer;
  readonly sethook: (L: LuaState, hook: Pointer, mask: number, count: number) => void;
  readonly yieldk: (L: LuaState, nresults: number, context: number, k: Pointer) => number;
  readonly isyieldable: (L: LuaState) => number;
  readonly tothread: (L: LuaState, index: number) => LuaState;
  readonly requiref: (L: LuaState, name: Pointer, open: Pointer, global: number) => void;
  readonly checkstack: (L: LuaState, n: number) => number;
  readonly atpanic: (L: LuaState, panic: Pointer) => Pointer;
  readonly where: (L: LuaState, level: number) => void;
  readonly xmove: (from: LuaState, to: LuaState, n: number) => void;
  /** The C functions the pattern natives call (pattern-natives.ts), by their C names. */
  readonly natives: NativeCApi;
  private readonly names = new Map<string, Pointer>();

  constructor(
    readonly lua: LuaWasm,
    exports: WasmExports | undefined,
  ) {
    const module = lua.module as EmscriptenModule;
    // Typed by what it is assigned to: the declarations above are the binding's one statement of each C type.
    const c = <F>(name: string): F => (exports?.[name] ?? module[`_${name}`]) as F;
    this.gettop = c('lua_gettop');
    this.settop = c('lua_settop');
    this.type = c('lua_type');
    this.toboolean = c('lua_toboolean');
    this.tointegerx = c('lua_tointegerx');
    this.tonumberx = c('lua_tonumberx');
    this.tolstring = c('lua_tolstring');
    this.pushnil = c('lua_pushnil');
    this.pushboolean = c('lua_pushboolean');
    this.pushinteger = c('lua_pushinteger');
    this.pushnumber = c('lua_pushnumber');
    this.pushlstring = c('lua_pushlstring');
    this.pushlightuserdata = c('lua_pushlightuserdata');
    this.newuserdatauv = c('lua_newuserdatauv');
    this.pushcclosure = c('lua_pushcclosure');
    this.setglobal = c('lua_setglobal');
    this.getglobal = c('lua_getglobal');
    this.resume = c('lua_resume');
    this.newthread = c('lua_newthread');
    this.loadbufferx = c('luaL_loadbufferx');
    this.pcallk = c('lua_pcallk');
    this.newstate = c('lua_newstate');
    this.newstateL = c('luaL_newstate');
    this.openlibs = c('luaL_openlibs');
    this.getallocf = c('lua_getallocf');
    this.setallocf = c('lua_setallocf');
    this.close = c('lua_close');
    this.error = c('lua_error');
    this.malloc = c('malloc');
    this.free = c('free');
    this.realloc = c('realloc');
    this.sethook = c('lua_sethook');
    this.yieldk = c('lua_yieldk');
    this.isyieldable = c('lua_isyieldable');
    this.tothread = c('lua_tothread');
    this.requiref = c('luaL_requiref');
    this.checkstack = c('lua_checkstack');
    this.atpanic = c('lua_atpanic');
    this.where = c('luaL_where');
    this.xmove = c('lua_xmove');
    this.natives = Object.fromEntries(NATIVE_C_FUNCTIONS.map((name) => [name, c(name)])) as NativeCApi;
  }

  /** The wasm heap's bytes (a new view after the heap grows). */
  get heap(): Uint8Array {
    return this.lua.module.HEAPU8;
  }

  /** The wasm heap as 32-bit words. */
  get words(): Int32Array {
    return this.lua.module.HEAP32;
  }

  /** A NUL-terminated copy of a constant name, made once and kept. */
  name(text: string): Pointer {
    let pointer = this.names.get(text);
    if (pointer === undefined) {
      const bytes = encoder.encode(text);
      pointer = this.malloc(bytes.length + 1);
      this.heap.set(bytes, pointer);
      this.heap[pointer + bytes.length] = 0;
      this.names.set(text, pointer);
    }
    return pointer;
  }
}

const encoder = new TextEncoder();

/** The libraries a section VM opens: luaL_openlibs's list without io, os and package. */
const SANDBOX_LIBRARIES: [global: string, opener: string][] = [
  ['_G', 'luaopen_base'],
  ['coroutine', 'luaopen_coroutine'],
  ['table', 'luaopen_table'],
  ['string', 'luaopen_string'],
  ['math', 'luaopen_math'],
  ['utf8', 'luaopen_utf8'],
  ['debug', 'luaopen_debug'],
];

/**
 * Where the sandbox's library openers sit in the wasm function table (luaL_requiref takes a C
 * function pointer); null when the table does not hold them all, and luaL_openlibs is used.
 */
export function sandboxLibraries(exports: WasmExports, table: WebAssembly.Table | undefined, c: CApi): { name: Pointer; open: Pointer }[] | null {
  if (table === undefined) return null;
  const openers = new Map<unknown, number>(SANDBOX_LIBRARIES.map(([, opener]) => [exports[opener], -1]));
  for (let index = 0; index < table.length; index++) {
    const fn: unknown = table.get(index);
    if (fn && openers.get(fn) === -1) openers.set(fn, index);
  }
  const found = SANDBOX_LIBRARIES.map(([global, opener]) => ({ global, open: openers.get(exports[opener]) ?? -1 }));
  if (found.some((library) => library.open < 0)) return null;
  return found.map(({ global, open }) => ({ name: c.name(global), open }));
}
