/**
 * The VM interface: what the Engine sees of Lua. A LuaPlatform (platform.ts) is one wasm
 * module per isolate; a LuaVm (lua-vm.ts) is one lua_State; a LuaThread is a coroutine the
 * Engine resumes by hand. Values crossing the boundary are scalars only (values.ts):
 * structured data crosses as JSON text.
 *
 * Under it: the C API binding with its typed handles (c-api.ts), the wasm exports and the
 * one import of wasmoon (wasm-exports.ts), the memory caps and allocator (vm-memory.ts), and
 * where template VMs live (memory-region.ts). It uses wasmoon's wasm build and raw C API
 * only, not its LuaEngine: an engine costs about 300 µs of JS set-up (type extensions, a wasm
 * function per engine), a bare `lua_newstate` about 50 µs, and the Engine makes a VM per
 * section entry.
 */
export { LuaPlatform } from './platform.ts';
export type { PlatformOptions, VmOptions } from './platform-options.ts';
export {
  HOOK_EVERY,
  LuaThread,
  LuaVm,
  type HookVerdict,
  type LeafReceiver,
  type LuaLeaf,
  type ResumeResult,
  type RuntimeChunk,
  type VmTemplate,
} from './lua-vm.ts';
export { STACK_SLOTS } from './vm-memory.ts';
export type { LuaScalar } from './values.ts';
