/**
 * A WebAssembly.Function polyfill for emscripten's addFunction, backed by precompiled stubs.
 *
 * wasmoon calls addFunction for every engine (the allocator of `traceAllocations`), every
 * JS function pushed to Lua, every `:await()` and every hook. addFunction needs a typed
 * wasm function for the function table: without WebAssembly.Function it compiles a tiny
 * module from bytes, which workerd refuses ("Wasm code generation disallowed by
 * embedder"); with it, it calls `new WebAssembly.Function({ parameters, results }, fn)`.
 * workerd has no WebAssembly.Function, so this polyfill answers that call by
 * instantiating the precompiled stub of the signature, which imports `fn` and exports it
 * again as a wasm function. Instantiating a precompiled module is allowed; compiling is
 * not. The stubs are written by scripts/gen-wasm-stubs.mjs.
 */
import ii from './wasm-stubs/ii.wasm';
import iiii from './wasm-stubs/iiii.wasm';
import iiiii from './wasm-stubs/iiiii.wasm';
import vii from './wasm-stubs/vii.wasm';

/** The stub modules by emscripten signature: result letter, then one per parameter. */
const STUBS: Readonly<Record<string, WebAssembly.Module>> = { ii, iiii, iiiii, vii };

/** What emscripten passes as the first argument of `new WebAssembly.Function`. */
interface FunctionType {
  parameters: string[];
  results: string[];
}

const LETTERS: Readonly<Record<string, string>> = { i32: 'i' };

function signatureOf(type: FunctionType): string {
  const letter = (valueType: string) => LETTERS[valueType] ?? `<${valueType}>`;
  const result = type.results.length === 0 ? 'v' : type.results.map(letter).join('');
  return result + type.parameters.map(letter).join('');
}

/** Wraps `fn` as a wasm function of `type`; called with `new`, as emscripten does. */
function WasmFunction(type: FunctionType, fn: (...args: number[]) => unknown): unknown {
  const signature = signatureOf(type);
  const stub = STUBS[signature];
  if (stub === undefined) {
    throw new TypeError(
      `no precompiled wasm stub for signature '${signature}': add it to ` + 'scripts/gen-wasm-stubs.mjs and src/worker/workerd-lua/wasm-function.ts',
    );
  }
  return new WebAssembly.Instance(stub, { e: { f: fn } }).exports.f;
}

/**
 * Installs the polyfill for good (addFunction runs at every engine creation, long after the
 * factory exists); a no-op where the runtime has WebAssembly.Function of its own.
 */
export function installWasmFunctionPolyfill(): void {
  if (typeof (WebAssembly as { Function?: unknown }).Function === 'function') return;
  Object.defineProperty(WebAssembly, 'Function', {
    value: WasmFunction,
    configurable: true,
    writable: true,
  });
}
