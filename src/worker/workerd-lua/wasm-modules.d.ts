/**
 * `.wasm` imports: wrangler's CompiledWasm rule (and the vitest pool) hand them over as
 * precompiled modules, since workerd refuses to compile wasm from bytes at run time.
 */
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
