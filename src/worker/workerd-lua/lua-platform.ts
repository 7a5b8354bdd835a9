/**
 * The isolate's LuaPlatform: one wasmoon factory and platform per isolate, shared by
 * every run object the isolate holds (notes/wasmoon-in-workerd.md: create one factory per
 * isolate and reuse it).
 */
import { createWorkerdLuaFactory, wasmExportsOf } from './lua-factory.ts'; // first: it defines `location` for wasmoon
import glue from 'wasmoon/dist/glue.wasm';
import { LuaPlatform } from '../../engine/lua/vm.ts';

let platform: Promise<LuaPlatform> | undefined;

/**
 * Bytes of the wasm heap all the isolate's section VMs may hold together: an isolate has
 * 128 MB in all, and its JavaScript heap needs the rest. Past it the VMs of suspended runs
 * go first (live-run.ts marks them; they resume by replay), and only then does the run
 * holding the most end with `Limit` (src/engine/lua/vm-memory.ts, PlatformOptions.memoryBytes).
 */
const ISOLATE_LUA_MEMORY = 80 * 1024 * 1024;

/**
 * Forgets the isolate's platform after its wasm module aborted (which protected calls into
 * Lua are there to prevent): the next run makes a new one, rather than every run after
 * failing on a module that no longer works.
 */
export function dropIsolatePlatform(): void {
  platform = undefined;
}

/** The isolate's platform, created on first use. */
export function isolatePlatform(): Promise<LuaPlatform> {
  if (platform === undefined) {
    // With the wasm instance's exports, which the platform calls directly rather than through
    // wasmoon's checked wrappers (src/engine/lua/c-api.ts).
    const created = createWorkerdLuaFactory(glue).then((factory) => LuaPlatform.create(factory, wasmExportsOf(factory), { memoryBytes: ISOLATE_LUA_MEMORY }));
    platform = created;
    // A failed creation is not kept, so that the next run reports it again.
    created.catch(() => {
      if (platform === created) platform = undefined;
    });
  }
  return platform;
}
