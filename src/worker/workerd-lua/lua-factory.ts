/**
 * wasmoon's LuaFactory inside workerd, created once per isolate.
 *
 * wasmoon 1.16.0 is an emscripten build for browsers and Node. workerd is neither, and it
 * refuses to compile wasm from bytes, so the factory is created from the precompiled
 * `wasmoon/dist/glue.wasm` module (imported through wrangler's CompiledWasm rule) with a
 * few globals bent for the moment of its creation. Each bend below says which part of the
 * glue it answers; only `location` (wasmoon-env.ts) and the WebAssembly.Function polyfill
 * (wasm-function.ts) outlive the creation. Measurements: notes/wasmoon-in-workerd.md.
 */
import { GLUE_BASE_URL } from './wasmoon-env.ts'; // first: it must run before wasmoon's module body
import { LuaFactory } from 'wasmoon';
import { installWasmFunctionPolyfill } from './wasm-function.ts';

/** The URL the glue is told to load its wasm from; the fetch of it is answered here. */
const GLUE_WASM_URL = `${GLUE_BASE_URL}glue.wasm`;

const factories = new WeakMap<WebAssembly.Module, Promise<LuaFactory>>();
const instanceExports = new WeakMap<LuaFactory, WebAssembly.Exports>();

/**
 * The exports of the wasm instance behind a factory made here, for LuaPlatform.create: the
 * platform calls them directly, without wasmoon's checked wrappers.
 */
export function wasmExportsOf(factory: LuaFactory): WebAssembly.Exports | undefined {
  return instanceExports.get(factory);
}

/**
 * The isolate's LuaFactory for the glue module `wasm` (import it from
 * `wasmoon/dist/glue.wasm`), with its Lua module loaded; later calls return the same one.
 */
export function createWorkerdLuaFactory(wasm: WebAssembly.Module): Promise<LuaFactory> {
  let factory = factories.get(wasm);
  if (factory === undefined) {
    factory = create(wasm);
    factories.set(wasm, factory);
    // A failed creation is not cached, so that the next request reports it again.
    factory.catch(() => factories.delete(wasm));
  }
  return factory;
}

async function create(wasm: WebAssembly.Module): Promise<LuaFactory> {
  installWasmFunctionPolyfill();

  // The glue fetches its wasm, reads the body as bytes and calls
  // `WebAssembly.instantiate(bytes, imports)`, which would compile them. The fetch is
  // answered with a placeholder buffer, and instantiate, seeing that placeholder,
  // instantiates the precompiled module instead, answering in the `{ module, instance }`
  // shape the glue expects of bytes. (LuaFactory takes only a URL and fixes the glue's
  // options, and this build would reject an `instantiateWasm` hook anyway.)
  const placeholder = new ArrayBuffer(0);
  let fetched = false;
  let exports: WebAssembly.Exports | undefined;
  const realFetch = globalThis.fetch;
  const realInstantiate = WebAssembly.instantiate;
  const restoreInstantiate = replaceGlobal(
    WebAssembly,
    'instantiate',
    function instantiate(this: unknown, ...args: Parameters<typeof WebAssembly.instantiate>) {
      if (args[0] !== placeholder) return Reflect.apply(realInstantiate, WebAssembly, args);
      restoreInstantiate();
      return realInstantiate(wasm, args[1]).then((instance) => {
        exports = instance.exports;
        return { module: wasm, instance };
      });
    },
  );

  try {
    const restores = [
      // The glue picks its environment by sniffing globals once, when it is called. With
      // neither `window`, `importScripts` nor Node's `process` it picks "shell", which this
      // build refuses ("Aborted(Assertion failed: shell environment detected but not
      // enabled at build time...)"); a defined importScripts makes it take the web-worker
      // path, the one that fetches its wasm.
      replaceGlobal(globalThis, 'importScripts', () => {
        throw new Error('importScripts is not available in workerd');
      }),
      // Under nodejs_compat (which the vitest pool forces) `process.versions.node` exists
      // and the glue takes its Node path (`import('module')`, `fs.readFileSync`), which
      // fails on the URL: "TypeError: The argument 'path' ... must be a file URL object".
      replaceGlobal(globalThis, 'process', undefined),
      // workerd has no WebAssembly.instantiateStreaming, so the web path fetches the URL
      // and hands the body's bytes to WebAssembly.instantiate (intercepted above).
      replaceGlobal(globalThis, 'fetch', (input: RequestInfo | URL, init?: RequestInit) => {
        if (String(input) !== GLUE_WASM_URL) return realFetch(input, init);
        fetched = true;
        return Promise.resolve({ ok: true, arrayBuffer: () => Promise.resolve(placeholder) });
      }),
    ];
    let factory: LuaFactory;
    try {
      // The glue sniffs its environment and calls fetch synchronously inside this call, so
      // these globals are back before any other code of the isolate can run.
      factory = new LuaFactory(GLUE_WASM_URL);
    } finally {
      for (const restore of restores.reverse()) restore();
    }
    try {
      await factory.getLuaModule();
    } catch (error) {
      if (fetched) throw error;
      throw new Error('wasmoon took a path other than fetching its wasm (see lua-factory.ts)', {
        cause: error,
      });
    }
    if (exports) instanceExports.set(factory, exports);
    return factory;
  } finally {
    restoreInstantiate();
  }
}

/**
 * Shadows `target[key]` with `value` as an own property; returns what puts the original
 * back (an own property as it was, or none, leaving an inherited one visible again).
 */
function replaceGlobal(target: object, key: string, value: unknown): () => void {
  const original = Object.getOwnPropertyDescriptor(target, key);
  Object.defineProperty(target, key, { value, configurable: true, writable: true });
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    if (original === undefined) Reflect.deleteProperty(target, key);
    else Object.defineProperty(target, key, original);
  };
}
