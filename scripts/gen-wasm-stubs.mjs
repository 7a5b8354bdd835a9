/**
 * Writes the wasm stub modules behind the WebAssembly.Function polyfill (src/worker/workerd-lua/wasm-stubs/).
 *
 * emscripten's `addFunction` turns a JS function into a typed wasm function by compiling
 * a tiny module at run time; workerd refuses to compile wasm from bytes, so the Worker
 * imports these modules precompiled instead (wrangler's CompiledWasm rule). Each one
 * imports a JS function as `e.f` with one signature and exports it again as `f`: the
 * bytes are exactly those emscripten's `convertJsFunctionToWasm` generates.
 *
 * Run `node scripts/gen-wasm-stubs.mjs` to write them, `--check` to verify the committed
 * files. A signature is emscripten's: the result first (`v` none, `i` i32), then one
 * letter per parameter.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Every signature wasmoon 1.16.0 passes to addFunction, and where it uses it. */
const SIGNATURES = {
  ii: 'lua_CFunction, int (lua_State *L): JS functions pushed to Lua and their __gc',
  iiii: 'lua_KFunction, int (lua_State *L, int status, lua_KContext ctx): the continuation of :await()',
  iiiii: 'lua_Alloc, void *(void *ud, void *ptr, size_t osize, size_t nsize): the allocator of { traceAllocations: true }',
  vii: 'lua_Hook, void (lua_State *L, lua_Debug *ar): the timeout hook of thread.setTimeout',
};

const VALUE_TYPES = { i: 0x7f };

/** The bytes of a module importing `e.f` with `signature` and exporting it as `f`. */
export function stubBytes(signature) {
  const [result, ...params] = signature;
  const typeOf = (letter) => {
    const code = VALUE_TYPES[letter];
    if (code === undefined) throw new Error(`unsupported type letter ${letter} in ${signature}`);
    return code;
  };
  const funcType = [0x60, params.length, ...params.map(typeOf)];
  funcType.push(...(result === 'v' ? [0] : [1, typeOf(result)]));
  const typeSection = [1, ...funcType]; // one type
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    0x01,
    typeSection.length,
    ...typeSection, // type section
    0x02,
    7,
    1,
    1,
    0x65,
    1,
    0x66,
    0x00,
    0x00, // import section: func "e" "f", type 0
    0x07,
    5,
    1,
    1,
    0x66,
    0x00,
    0x00, // export section: "f" = func 0
  ]);
}

const check = process.argv.includes('--check');
let stale = 0;
for (const [signature, use] of Object.entries(SIGNATURES)) {
  const path = fileURLToPath(new URL(`../src/worker/workerd-lua/wasm-stubs/${signature}.wasm`, import.meta.url));
  const bytes = stubBytes(signature);
  if (check) {
    let current;
    try {
      current = readFileSync(path);
    } catch {
      current = Buffer.alloc(0);
    }
    const same = Buffer.compare(current, Buffer.from(bytes)) === 0;
    if (!same) stale += 1;
    console.log(`${same ? 'ok   ' : 'STALE'} ${signature}.wasm (${bytes.length} bytes) ${use}`);
  } else {
    writeFileSync(path, bytes);
    console.log(`wrote ${signature}.wasm (${bytes.length} bytes) ${use}`);
  }
}
if (stale > 0) process.exit(1);
