/**
 * The wasm side of wasmoon: the one module that imports it. A platform calls the C functions
 * of Lua's wasm build directly, from the wasm instance's own exports, when it could capture
 * them as wasmoon's glue instantiated the module; wasmoon's exported wrappers check the
 * runtime on every call (its build has assertions on), which costs more than the call itself.
 */
import type { LuaFactory, LuaWasm } from 'wasmoon';

/** wasmoon's factory and its loaded wasm module, as the rest of the Engine names them. */
export type { LuaFactory, LuaWasm };

/** A function of the wasm instance, before the C API binding (c-api.ts) gives it its type. */
export type WasmFunction = (...args: never[]) => unknown;

/** The wasm instance's exports, by C name. */
export type WasmExports = Record<string, WasmFunction>;

/** The emscripten module of a loaded LuaWasm: its `_`-prefixed wrappers, its heap views, addFunction. */
export type EmscriptenModule = LuaWasm['module'] & Record<string, WasmFunction> & { addFunction(fn: Function, signature: string): number };

/** The wasm exports in `exports` when they are Lua's (a wasmoon instance's), else undefined. */
export function luaExports(exports: WebAssembly.Exports | undefined): WasmExports | undefined {
  return exports && typeof exports.lua_newstate === 'function' ? (exports as unknown as WasmExports) : undefined;
}

/**
 * Makes a wasmoon factory and captures the wasm instance's exports as the glue instantiates
 * them, by wrapping WebAssembly.instantiate for that moment only.
 */
export async function captureExports(make: () => LuaFactory | Promise<LuaFactory>): Promise<{ lua: LuaWasm; exports?: WasmExports }> {
  const wasm = WebAssembly as unknown as { instantiate: (...args: unknown[]) => Promise<unknown> };
  const original = wasm.instantiate;
  let exports: WasmExports | undefined;
  const capture = async function (this: unknown, ...args: unknown[]) {
    const result = await Reflect.apply(original, this, args);
    const instance = result instanceof WebAssembly.Instance ? result : (result as { instance: WebAssembly.Instance }).instance;
    exports ??= luaExports(instance?.exports);
    return result;
  };
  wasm.instantiate = capture;
  try {
    const factory = await make();
    const lua = await factory.getLuaModule();
    return { lua, ...(exports ? { exports } : {}) };
  } finally {
    // Put back unless someone else replaced it meanwhile (theirs stays).
    if (wasm.instantiate === undefined || wasm.instantiate === capture) wasm.instantiate = original;
  }
}

/** The wasm function table of `exports`, when the build exports it. */
export function functionTable(exports: WasmExports | undefined): WebAssembly.Table | undefined {
  const table = exports?.__indirect_function_table as unknown;
  return table instanceof WebAssembly.Table ? table : undefined;
}
