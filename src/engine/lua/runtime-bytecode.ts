/**
 * The runtime's chunks compiled once per isolate to bytecode, which every section VM loads
 * (lua-vm.ts, and the module leaf in platform.ts) instead of parsing their source.
 */
import type { LuaState } from './c-api.ts';
import { LUA_OK } from './lua-constants.ts';
import type { RuntimeChunk } from './lua-vm.ts';
import { luaBytes, readScalar, withCString, type ValueHost } from './values.ts';
import type { LuaWasm } from './wasm-exports.ts';

/** Bytecode of the runtime's chunks, each compiled on first use and kept in the wasm heap. */
export class RuntimeBytecode {
  private readonly compiled = new Map<string, { pointer: number; size: number }>();

  constructor(
    private readonly lua: LuaWasm,
    /** The platform: its C API, and what reading a compile error needs. */
    private readonly platform: ValueHost,
  ) {}

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
    const state = lua.luaL_newstate() as LuaState;
    try {
      lua.luaL_openlibs(state);
      lua.lua_getglobal(state, 'string');
      lua.lua_getfield(state, -1, 'dump');
      const loaded = withCString(this.platform.c, chunk.source, (pointer, size) => lua.luaL_loadbufferx(state, pointer, size, `=${chunk.name}`, 't'));
      if (loaded !== LUA_OK) throw new Error(`runtime chunk ${chunk.name}: ${readScalar(this.platform, state, -1)}`);
      // Stripped of debug info: a third smaller and faster to load into every VM. The
      // runtime raises its errors without positions anyway (level 0).
      lua.lua_pushboolean(state, 1);
      const dumpedOk = lua.lua_pcallk(state, 2, 1, 0, 0, null);
      if (dumpedOk !== LUA_OK) throw new Error(`runtime chunk ${chunk.name}: ${readScalar(this.platform, state, -1)}`);
      const dumped = luaBytes(this.platform, state, -1).slice();
      const pointer = this.platform.c.malloc(dumped.length);
      this.platform.c.heap.set(dumped, pointer);
      return { pointer, size: dumped.length };
    } finally {
      lua.lua_close(state);
    }
  }
}
