/**
 * The VM interface: the one module that touches wasmoon.
 *
 * A LuaPlatform owns one wasmoon factory (one wasm heap per isolate) and the runtime
 * chunks compiled once to bytecode; a LuaVm is one fresh Lua state; a LuaThread is a
 * coroutine the Engine drives by hand with resume, reading what it yields. Values that
 * cross the boundary are scalars only (strings, numbers, booleans, nil): structured data
 * crosses as JSON text, so no wasmoon table conversion can lose integers, nulls or order.
 */
import type { LuaEngine, LuaFactory, LuaThread as WasmoonThread, LuaWasm } from 'wasmoon';
import { LuaRawResult, decorateFunction } from 'wasmoon';

/** A value that may cross between JS and Lua. */
export type LuaScalar = string | number | boolean | null;

/** A JS function exposed to Lua: takes scalars, returns a scalar or a list of them. */
export type LuaLeaf = (...args: LuaScalar[]) => LuaScalar | LuaScalar[] | void;

/** The outcome of one resume of a thread. */
export type ResumeResult =
  | { status: 'yield'; values: LuaScalar[] }
  | { status: 'return'; values: LuaScalar[] }
  | { status: 'error'; message: string };

/** Source of a chunk compiled once per platform and loaded as bytecode into every VM. */
export interface RuntimeChunk {
  name: string;
  source: string;
}

/** Options of one VM. */
export interface VmOptions {
  /** Upper bound of the Lua heap in bytes; allocations past it fail with "not enough memory". */
  memoryLimit?: number;
}

const LUA_OK = 0;
const LUA_YIELD = 1;
const LUA_TNIL = 0;
const LUA_TBOOLEAN = 1;
const LUA_TNUMBER = 3;
const LUA_TSTRING = 4;

/** One wasmoon factory and the compiled runtime chunks; create one per isolate. */
export class LuaPlatform {
  private readonly compiled = new Map<string, { pointer: number; size: number }>();

  private constructor(
    private readonly factory: LuaFactory,
    readonly lua: LuaWasm,
  ) {}

  /** Wraps a wasmoon factory (Node's default, or the workerd one from src/worker). */
  static async create(factory: LuaFactory): Promise<LuaPlatform> {
    return new LuaPlatform(factory, await factory.getLuaModule());
  }

  /** Creates a fresh Lua state with the standard libraries open. */
  async newVm(options: VmOptions = {}): Promise<LuaVm> {
    const engine = await this.factory.createEngine({
      injectObjects: false,
      enableProxy: false,
      traceAllocations: options.memoryLimit !== undefined,
    });
    if (options.memoryLimit !== undefined) engine.global.setMemoryMax(options.memoryLimit);
    return new LuaVm(this, engine);
  }

  /**
   * Bytecode of a runtime chunk, compiled on first use. Loading bytecode is several times
   * faster than parsing source, and the runtime loads into every section VM.
   */
  bytecode(chunk: RuntimeChunk): { pointer: number; size: number } {
    const cached = this.compiled.get(chunk.name);
    if (cached) return cached;
    const compiledChunk = this.compile(chunk);
    this.compiled.set(chunk.name, compiledChunk);
    return compiledChunk;
  }

  private compile(chunk: RuntimeChunk): { pointer: number; size: number } {
    const lua = this.lua;
    const state = lua.luaL_newstate();
    try {
      lua.luaL_openlibs(state);
      lua.lua_getglobal(state, 'string');
      lua.lua_getfield(state, -1, 'dump');
      const loaded = withCString(lua, chunk.source, (pointer, size) =>
        lua.luaL_loadbufferx(state, pointer, size, `=${chunk.name}`, 't'),
      );
      if (loaded !== LUA_OK) throw new Error(`runtime chunk ${chunk.name}: ${readScalar(lua, state, -1)}`);
      // string.dump(fn, false) keeps line info, so runtime errors still say where.
      lua.lua_pushboolean(state, 0);
      const dumpedOk = lua.lua_pcallk(state, 2, 1, 0, 0, null);
      if (dumpedOk !== LUA_OK) throw new Error(`runtime chunk ${chunk.name}: ${readScalar(lua, state, -1)}`);
      const dumped = copyLuaString(lua, state, -1);
      const pointer = lua.module._malloc(dumped.length);
      lua.module.HEAPU8.set(dumped, pointer);
      return { pointer, size: dumped.length };
    } finally {
      lua.lua_close(state);
    }
  }
}

/** One Lua state. Close it when the section entry ends. */
export class LuaVm {
  private closed = false;

  constructor(
    private readonly platform: LuaPlatform,
    private readonly engine: LuaEngine,
  ) {}

  /** Sets a global to a scalar or to a JS leaf function. */
  setGlobal(name: string, value: LuaScalar | LuaLeaf): void {
    if (typeof value === 'function') {
      this.engine.global.set(name, decorateFunction(wrapLeaf(value), { receiveThread: true }));
    } else {
      this.engine.global.set(name, value ?? undefined);
    }
  }

  /** Sets a global to a NULL light userdata: the value json.null stands for. */
  setNull(name: string): void {
    const lua = this.platform.lua;
    const address = this.engine.global.address;
    lua.lua_pushlightuserdata(address, 0);
    lua.lua_setglobal(address, name);
  }

  /**
   * Sets a global to a function that returns a fresh, empty full userdata: Lua itself cannot
   * make one, and Tool, Pack and model objects must be userdata.
   */
  setUserdataFactory(name: string): void {
    const lua = this.platform.lua;
    const factory = (thread: WasmoonThread) => {
      lua.lua_newuserdatauv(thread.address, 0, 0);
      return new LuaRawResult(1);
    };
    this.engine.global.set(name, decorateFunction(factory, { receiveThread: true }));
  }

  /** Loads a runtime chunk (as bytecode) and runs it to completion with the given arguments. */
  runChunk(chunk: RuntimeChunk, args: LuaScalar[] = []): LuaScalar[] {
    const { pointer, size } = this.platform.bytecode(chunk);
    const thread = this.engine.global;
    const base = thread.getTop();
    const lua = this.platform.lua;
    const status = lua.luaL_loadbufferx(thread.address, pointer, size, `=${chunk.name}`, 'b');
    if (status !== LUA_OK) throw new Error(`loading ${chunk.name}: ${readScalar(lua, thread.address, -1)}`);
    for (const arg of args) pushScalar(lua, thread.address, arg);
    const called = lua.lua_pcallk(thread.address, args.length, -1, 0, 0, null);
    if (called !== LUA_OK) {
      const message = String(readScalar(lua, thread.address, -1));
      thread.setTop(base);
      throw new Error(`running ${chunk.name}: ${message}`);
    }
    const values = readValues(lua, thread.address, base + 1, thread.getTop());
    thread.setTop(base);
    return values;
  }

  /** A new coroutine that will call the global function `name` when first resumed. */
  newThread(functionName: string): LuaThread {
    const global = this.engine.global;
    const thread = global.newThread();
    // Keep the thread referenced from the registry-anchored global stack slot until closed.
    const type = this.platform.lua.lua_getglobal(thread.address, functionName);
    if (type !== 6) throw new Error(`no Lua function named ${functionName}`);
    return new LuaThread(this.platform.lua, thread);
  }

  /** Bytes the Lua heap holds (only tracked when a memory limit is set). */
  memoryUsed(): number | undefined {
    try {
      return this.engine.global.getMemoryUsed();
    } catch {
      return undefined;
    }
  }

  /** Frees the Lua state; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.engine.global.close();
  }
}

/** A coroutine driven from JS: start it, read what it yields, resume it with answers. */
export class LuaThread {
  constructor(
    private readonly lua: LuaWasm,
    private readonly thread: WasmoonThread,
  ) {}

  /** Resumes the coroutine with the given values (the first resume passes the function's arguments). */
  resume(args: LuaScalar[]): ResumeResult {
    const address = this.thread.address;
    for (const arg of args) pushScalar(this.lua, address, arg);
    const { result, resultCount } = this.thread.resume(args.length);
    const top = this.lua.lua_gettop(address);
    if (result === LUA_YIELD || result === LUA_OK) {
      const values = readValues(this.lua, address, top - resultCount + 1, top);
      this.lua.lua_settop(address, top - resultCount);
      return { status: result === LUA_YIELD ? 'yield' : 'return', values };
    }
    const message = String(readScalar(this.lua, address, -1) ?? 'unknown Lua error');
    this.lua.lua_settop(address, 0);
    return { status: 'error', message };
  }
}

function wrapLeaf(leaf: LuaLeaf) {
  return (thread: WasmoonThread, ...args: unknown[]) => {
    const lua = thread.lua;
    // wasmoon hands strings over as JS strings and numbers as numbers; anything else
    // (tables, functions) never crosses by design and arrives as null.
    const scalars = args.map((arg) =>
      typeof arg === 'string' || typeof arg === 'number' || typeof arg === 'boolean' ? arg : null,
    );
    // Missing trailing arguments arrive as null, as Lua's nil would.
    while (scalars.length < leaf.length) scalars.push(null);
    const result = leaf(...scalars);
    if (result === undefined) return new LuaRawResult(0);
    const values = Array.isArray(result) ? result : [result];
    for (const value of values) pushScalar(lua, thread.address, value);
    return new LuaRawResult(values.length);
  };
}

function pushScalar(lua: LuaWasm, state: number, value: LuaScalar): void {
  if (value === null) lua.lua_pushnil(state);
  else if (typeof value === 'boolean') lua.lua_pushboolean(state, value ? 1 : 0);
  else if (typeof value === 'number') {
    if (Number.isInteger(value) && Number.isSafeInteger(value)) lua.lua_pushinteger(state, BigInt(value));
    else lua.lua_pushnumber(state, value);
  } else {
    // lua_pushlstring with an explicit length, so NUL bytes inside text survive.
    withCString(lua, value, (pointer, size) => lua.lua_pushlstring(state, pointer, size));
  }
}

function readValues(lua: LuaWasm, state: number, from: number, to: number): LuaScalar[] {
  const values: LuaScalar[] = [];
  for (let index = from; index <= to; index++) values.push(readScalar(lua, state, index));
  return values;
}

function readScalar(lua: LuaWasm, state: number, index: number): LuaScalar {
  const type = lua.lua_type(state, index);
  switch (type) {
    case LUA_TNIL:
      return null;
    case LUA_TBOOLEAN:
      return lua.lua_toboolean(state, index) !== 0;
    case LUA_TNUMBER:
      if (lua.lua_isinteger(state, index)) return Number(lua.lua_tointegerx(state, index, null));
      return lua.lua_tonumberx(state, index, null);
    case LUA_TSTRING:
      return new TextDecoder().decode(copyLuaString(lua, state, index));
    default:
      return `<${lua.lua_typename(state, type)}>`;
  }
}

function copyLuaString(lua: LuaWasm, state: number, index: number): Uint8Array {
  const lengthPointer = lua.module._malloc(4);
  try {
    // The raw export: wasmoon's wrapper would decode the bytes and stop at the first NUL.
    const rawToLString = (lua.module as unknown as Record<string, (...a: number[]) => number>)['_lua_tolstring']!;
    const pointer = rawToLString(state, index, lengthPointer);
    const length = lua.module.getValue(lengthPointer, 'i32');
    return lua.module.HEAPU8.slice(pointer, pointer + length);
  } finally {
    lua.module._free(lengthPointer);
  }
}

const encoder = new TextEncoder();

function withCString<T>(lua: LuaWasm, text: string, use: (pointer: number, size: number) => T): T {
  const bytes = encoder.encode(text);
  const pointer = lua.module._malloc(bytes.length + 1);
  try {
    lua.module.HEAPU8.set(bytes, pointer);
    lua.module.HEAPU8[pointer + bytes.length] = 0;
    return use(pointer, bytes.length);
  } finally {
    lua.module._free(pointer);
  }
}
