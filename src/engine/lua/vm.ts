/**
 * The VM interface: the one module that touches wasmoon.
 *
 * It uses wasmoon's wasm build and its raw C API only, not its LuaEngine: an engine costs
 * about 300 µs of JS set-up (type extensions, a wasm function per engine), a bare
 * `lua_newstate` about 50 µs, and the Engine makes a VM per section entry. A LuaPlatform
 * owns one wasm module (one heap per isolate), the wasm functions made once (the JS leaf
 * trampoline, the allocator, the count hook), the runtime compiled once to bytecode and the
 * memory regions template VMs live in (memory-region.ts); a LuaVm is one lua_State; a
 * LuaThread is a coroutine the Engine resumes by hand.
 * Values crossing the boundary are scalars only: structured data crosses as JSON text.
 */
import type { LuaFactory, LuaWasm } from 'wasmoon';
import { MemoryRegion, type WasmHeap } from './memory-region.ts';
import { formatBytes, type RunMemory } from './run-memory.ts';
import { callPatternNative, nativeOf, NATIVE_C_FUNCTIONS, NATIVE_INDEX, type NativeCApi, type NativeHost, type PatternNative } from './pattern-natives.ts';
import { LUA_MASKCOUNT, LUA_OK, LUA_TBOOLEAN, LUA_TFUNCTION, LUA_TNIL, LUA_TNUMBER, LUA_TSTRING, LUA_YIELD, upvalue } from './lua-constants.ts';

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

/**
 * What the count hook decides every HOOK_EVERY instructions: go on, pause the thread (it
 * yields to whoever resumed it, with no values), or stop it (it raises the runtime's stop
 * value now and at every later instruction, so no pcall can keep it alive).
 */
export type HookVerdict = 'go' | 'pause' | 'stop';

/** Instructions between two calls of a VM's count hook. */
export const HOOK_EVERY = 10_000;

/** Options of one VM. */
export interface VmOptions {
  /** Upper bound of the Lua heap in bytes; allocations past it fail with "not enough memory". */
  memoryLimit?: number;
  /** How the VM is set up before anything particular to it; see VmTemplate. */
  template?: VmTemplate;
  /** Whoever the VM works for: LuaPlatform.closeVmsOf closes every VM of one owner. */
  owner?: object;
  /** The run's share of Lua memory the VM's footprint is charged to (run-memory.ts). */
  memory?: RunMemory;
}

/**
 * A recipe every VM of a kind starts from. `build` runs on a fresh state, with the standard
 * libraries open, before anything particular to the VM: what it leaves is saved in a memory
 * region (memory-region.ts) and copied back for later VMs, so it must not depend on the VM
 * it runs in, and leaves it defines are bound afterwards (bindLeaf). A VM made from a template
 * lives in its own region or, when every region is taken, is built afresh; either way its
 * Lua code sees the same state, and ending it runs no more Lua (no finalizers).
 */
export interface VmTemplate {
  /** The runtime modules the VM's module loader serves (LuaVm.setModuleLoader). */
  readonly modules: Record<string, RuntimeChunk>;
  build(vm: LuaVm): void;
}

/** How many template VMs may live in regions at once, how big a region is, and how much all VMs may hold. */
export interface PlatformOptions {
  regions?: number;
  regionBytes?: number;
  /**
   * Bytes of the wasm heap all template VMs together may hold (default 1 GiB). When a VM
   * would pass it, the run holding the most ends with `Limit` and its VMs are closed at once;
   * a run that holds the most itself is refused.
   */
  memoryBytes?: number;
}

const DEFAULT_REGIONS = 32;
const DEFAULT_REGION_BYTES = 512 * 1024;
const DEFAULT_PLATFORM_MEMORY = 1024 * 1024 * 1024;

/**
 * Stack slots a thread may hold before the count hook raises `stack overflow`. Lua's own
 * bound (LUAI_MAXSTACK, a million slots, 16 MiB) lies past a VM's memory cap, so without this
 * deep recursion would end as out of memory. A slot is 16 bytes; the stack doubles as it grows,
 * so a thread's stack stays under 8 MiB.
 */
export const STACK_SLOTS = 200_000;
/** Where lua_State keeps stack_last and stack in Lua 5.4.6's wasm32 build; checked at start-up. */
const STACK_LAST_OFFSET = 24;
const STACK_OFFSET = 28;
/** Lua's stack constants: the slots past stack_last, the largest stack, the stack of a thread handling an overflow. */
const EXTRA_STACK = 5;
const LUAI_MAXSTACK = 1_000_000;
const ERRORSTACKSIZE = LUAI_MAXSTACK + 200;
/** A new thread's stack (BASIC_STACK_SIZE slots), as stack_last - stack in bytes. */
const FRESH_STACK_BYTES = 40 * 16;

/** The leaf index that makes the trampoline push a fresh userdata instead of calling JS. */
const USERDATA_LEAF = -1;
/** The leaf index that makes the trampoline load a named runtime module as a function. */
const MODULE_LEAF = -2;
/** The leaf index that makes the trampoline put the count hook on the thread it is given. */
const WATCH_LEAF = -3;
/** Leaf indices at or below this one are the pattern natives (pattern-natives.ts). */
const FIRST_NATIVE = -10;

type RawExports = Record<string, (...args: number[]) => number>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type CFunction = (...args: any[]) => any;

/**
 * The C functions the hot paths call. From the wasm instance's own exports when they could be
 * captured at instantiation: wasmoon's build has assertions on, and its exported wrappers
 * check the runtime on every call, which cost more than the call itself.
 */
class CApi {
  readonly gettop: CFunction; readonly settop: CFunction; readonly type: CFunction;
  readonly toboolean: CFunction; readonly tointegerx: CFunction;
  readonly tonumberx: CFunction; readonly tolstring: CFunction; readonly pushnil: CFunction;
  readonly pushboolean: CFunction; readonly pushinteger: CFunction; readonly pushnumber: CFunction;
  readonly pushlstring: CFunction; readonly pushlightuserdata: CFunction; readonly newuserdatauv: CFunction;
  readonly pushcclosure: CFunction; readonly setglobal: CFunction; readonly getglobal: CFunction;
  readonly resume: CFunction; readonly newthread: CFunction; readonly loadbufferx: CFunction;
  readonly pcallk: CFunction; readonly newstate: CFunction; readonly newstateL: CFunction;
  readonly getallocf: CFunction; readonly setallocf: CFunction;
  readonly openlibs: CFunction; readonly close: CFunction; readonly error: CFunction;
  readonly malloc: CFunction; readonly free: CFunction; readonly realloc: CFunction;
  readonly sethook: CFunction; readonly yieldk: CFunction; readonly isyieldable: CFunction;
  readonly tothread: CFunction; readonly requiref: CFunction; readonly checkstack: CFunction;
  readonly atpanic: CFunction; readonly where: CFunction;
  /** The C functions the pattern natives call (pattern-natives.ts), by their C names. */
  readonly natives: NativeCApi;
  private readonly names = new Map<string, number>();

  constructor(readonly lua: LuaWasm, exports: Record<string, CFunction> | undefined) {
    const module = lua.module as unknown as Record<string, CFunction>;
    const c = (name: string): CFunction => exports?.[name] ?? module[`_${name}`]!;
    this.gettop = c('lua_gettop'); this.settop = c('lua_settop'); this.type = c('lua_type');
    this.toboolean = c('lua_toboolean'); this.tointegerx = c('lua_tointegerx');
    this.tonumberx = c('lua_tonumberx'); this.tolstring = c('lua_tolstring'); this.pushnil = c('lua_pushnil');
    this.pushboolean = c('lua_pushboolean'); this.pushinteger = c('lua_pushinteger'); this.pushnumber = c('lua_pushnumber');
    this.pushlstring = c('lua_pushlstring'); this.pushlightuserdata = c('lua_pushlightuserdata');
    this.newuserdatauv = c('lua_newuserdatauv'); this.pushcclosure = c('lua_pushcclosure');
    this.setglobal = c('lua_setglobal'); this.getglobal = c('lua_getglobal'); this.resume = c('lua_resume');
    this.newthread = c('lua_newthread'); this.loadbufferx = c('luaL_loadbufferx'); this.pcallk = c('lua_pcallk');
    this.newstate = c('lua_newstate'); this.newstateL = c('luaL_newstate'); this.openlibs = c('luaL_openlibs');
    this.getallocf = c('lua_getallocf'); this.setallocf = c('lua_setallocf');
    this.close = c('lua_close'); this.error = c('lua_error'); this.malloc = c('malloc'); this.free = c('free');
    this.realloc = c('realloc'); this.sethook = c('lua_sethook'); this.yieldk = c('lua_yieldk');
    this.isyieldable = c('lua_isyieldable'); this.tothread = c('lua_tothread');
    this.requiref = c('luaL_requiref'); this.checkstack = c('lua_checkstack'); this.atpanic = c('lua_atpanic');
    this.where = c('luaL_where');
    this.natives = Object.fromEntries(NATIVE_C_FUNCTIONS.map((name) => [name, c(name)])) as NativeCApi;
  }

  /** A NUL-terminated copy of a constant name, made once and kept. */
  name(text: string): number {
    let pointer = this.names.get(text);
    if (pointer === undefined) {
      const bytes = encoder.encode(text);
      pointer = this.malloc(bytes.length + 1) as number;
      this.lua.module.HEAPU8.set(bytes, pointer);
      this.lua.module.HEAPU8[pointer + bytes.length] = 0;
      this.names.set(text, pointer);
    }
    return pointer;
  }
}


/** The libraries a section VM opens: luaL_openlibs's list without io, os and package. */
const SANDBOX_LIBRARIES: [global: string, opener: string][] = [
  ['_G', 'luaopen_base'], ['coroutine', 'luaopen_coroutine'], ['table', 'luaopen_table'],
  ['string', 'luaopen_string'], ['math', 'luaopen_math'], ['utf8', 'luaopen_utf8'], ['debug', 'luaopen_debug'],
];

/**
 * Where the sandbox's library openers sit in the wasm function table (luaL_requiref takes a C
 * function pointer); null when the table does not hold them all, and luaL_openlibs is used.
 */
function sandboxLibraries(exports: Record<string, CFunction>, c: CApi): { name: number; open: number }[] | null {
  const table = exports.__indirect_function_table as unknown as WebAssembly.Table | undefined;
  if (!(table instanceof WebAssembly.Table)) return null;
  const openers = new Map(SANDBOX_LIBRARIES.map(([, opener]) => [exports[opener], -1]));
  for (let index = 0; index < table.length; index++) {
    const fn = table.get(index) as CFunction | null;
    if (fn && openers.get(fn) === -1) openers.set(fn, index);
  }
  const found = SANDBOX_LIBRARIES.map(([global, opener]) => ({ global, open: openers.get(exports[opener]) ?? -1 }));
  if (found.some((library) => library.open < 0)) return null;
  return found.map(({ global, open }) => ({ name: c.name(global), open }));
}

/**
 * Makes a wasmoon factory and captures the wasm instance's exports as the glue instantiates
 * them, by wrapping WebAssembly.instantiate for that moment only.
 */
async function captureExports(make: () => LuaFactory | Promise<LuaFactory>): Promise<{ factory: LuaFactory; exports?: Record<string, CFunction> }> {
  const wasm = WebAssembly as unknown as { instantiate: CFunction };
  const original = wasm.instantiate;
  let exports: Record<string, CFunction> | undefined;
  const capture = async function (this: unknown, ...args: unknown[]) {
    const result = await Reflect.apply(original, this, args);
    const instance = result instanceof WebAssembly.Instance ? result : (result as { instance: WebAssembly.Instance }).instance;
    const found = instance?.exports as Record<string, CFunction> | undefined;
    if (found && typeof found.lua_newstate === 'function') exports ??= found;
    return result;
  };
  wasm.instantiate = capture;
  try {
    const factory = await make();
    await factory.getLuaModule();
    return { factory, ...(exports ? { exports } : {}) };
  } finally {
    // Put back unless someone else replaced it meanwhile (theirs stays).
    if (wasm.instantiate === undefined || wasm.instantiate === capture) wasm.instantiate = original;
  }
}

/** One wasm module, the shared wasm functions and the compiled runtime; one per isolate. */
export class LuaPlatform {
  private readonly compiled = new Map<string, { pointer: number; size: number }>();
  private readonly vms = new Map<number, LuaVm>();
  private nextVm = 1;
  /** The C function every JS leaf is: upvalues (vm id, leaf index). */
  readonly trampoline: number;
  /** The lua_Alloc of every template VM, and of every plain VM once its memory is limited: ud is the VM id. */
  readonly allocator: number;
  /**
   * The lua_Hook every watched thread counts instructions with. A C hook, not a Lua one: a
   * hook may yield only from C, and pausing a spinning thread is what lets the Engine run
   * other chains, and hear a cancellation, while one of them loops.
   */
  readonly hook: number;
  readonly c: CApi;
  /** Scratch words for out-parameters (a string's length, a resume's result count). */
  readonly lengthWord: number;
  readonly countWord: number;
  private scratch = 0;
  private scratchSize = 0;

  /** True when the wasm exports were captured and are called directly (the fast path). */
  readonly direct: boolean;
  /** The standard libraries a section VM opens, as function-table pointers; null: all of them. */
  private readonly libraries: { name: number; open: number }[] | null;
  /** Where template VMs live (memory-region.ts), made as they are first needed. */
  private readonly regions: MemoryRegion[] = [];
  private readonly maxRegions: number;
  private readonly regionBytes: number;
  private readonly heap: WasmHeap;
  /** Bytes all template VMs hold, and the most they may. */
  private memoryUsed = 0;
  private readonly memoryBytes: number;
  /** True when lua_State's stack fields sit where STACK_OFFSET says (the stack bound needs them). */
  private readonly stackReadable: boolean;
  /** The request lua_Alloc is answering right now (to tell a thread's stack growing). */
  private allocating = 0;
  private allocatingOld = 0;
  private allocatingNew = 0;
  /** Why the allocation under way was refused, when a cap refused it. */
  private refusal: string | undefined;
  private readonly nativeHost: NativeHost;

  private constructor(readonly lua: LuaWasm, exports: Record<string, CFunction> | undefined, options: PlatformOptions) {
    const module = lua.module as unknown as RawExports & { addFunction(fn: Function, signature: string): number };
    this.maxRegions = options.regions ?? DEFAULT_REGIONS;
    this.regionBytes = options.regionBytes ?? DEFAULT_REGION_BYTES;
    this.memoryBytes = options.memoryBytes ?? DEFAULT_PLATFORM_MEMORY;
    this.direct = exports !== undefined;
    this.c = new CApi(lua, exports);
    this.libraries = exports ? sandboxLibraries(exports, this.c) : null;
    this.lengthWord = this.c.malloc(4);
    this.countWord = this.c.malloc(4);
    this.trampoline = module.addFunction((state: number) => this.callLeaf(state), 'ii');
    this.allocator = module.addFunction(
      (ud: number, pointer: number, oldSize: number, newSize: number) => this.allocate(ud, pointer, oldSize, newSize),
      'iiiii',
    );
    this.hook = module.addFunction((state: number) => this.countHook(state), 'vii');
    const c = this.c;
    this.heap = {
      bytes: () => lua.module.HEAPU8,
      malloc: (size) => c.malloc(size) as number,
      realloc: (pointer, size) => c.realloc(pointer, size) as number,
      free: (pointer) => c.free(pointer),
    };
    this.stackReadable = this.checkStackFields();
    const table = exports?.__indirect_function_table as unknown as WebAssembly.Table | undefined;
    this.nativeHost = {
      c: c.natives,
      heap: () => lua.module.HEAPU8,
      lengthWord: this.lengthWord,
      name: (text) => c.name(text),
      scratchBuffer: (size) => this.scratchBuffer(size),
      pushNative: (state, vmId, index, extra) => {
        c.pushinteger(state, BigInt(vmId));
        c.pushinteger(state, BigInt(index));
        // The trampoline finds its VM and leaf in upvalues 1 and 2: below the native's own.
        c.natives.lua_rotate(state, -2 - extra, 2);
        c.pushcclosure(state, this.trampoline, 2 + extra);
      },
      raiseStop: (state) => this.raiseStop(state),
      callC: (pointer, state) => {
        const fn = table?.get(pointer) as CFunction | null | undefined;
        if (fn) return fn(state) as number;
        // Without the function table: through lua_call, below the arguments.
        const top = c.natives.lua_gettop(state) as number;
        c.natives.lua_pushvalue(state, upvalue(3));
        c.natives.lua_rotate(state, 1, 1);
        c.natives.lua_callk(state, top, -1, 0, 0);
        return c.natives.lua_gettop(state) as number;
      },
    };
  }

  /** True when a fresh state's stack fields read as Lua 5.4.6 lays them out, and follow a growth. */
  private checkStackFields(): boolean {
    const state = this.c.newstateL() as number;
    try {
      if (this.stackBytes(state) !== FRESH_STACK_BYTES) return false;
      this.c.checkstack(state, 1000);
      return this.stackBytes(state) >= 1000 * 16;
    } finally {
      this.c.close(state);
    }
  }

  private stackBytes(state: number): number {
    const words = this.lua.module.HEAP32;
    return words[(state + STACK_LAST_OFFSET) >> 2]! - words[(state + STACK_OFFSET) >> 2]!;
  }

  /** Pushes a native's closure with the `extra` upvalues already on the stack. */
  pushNative(state: number, vmId: number, index: number, extra: number): void {
    this.nativeHost.pushNative(state, vmId, index, extra);
  }

  /** Raises the runtime's stop value in `state`, and at every later instruction of it. */
  private raiseStop(state: number): never {
    const c = this.c;
    c.sethook(state, this.hook, LUA_MASKCOUNT, 1);
    c.getglobal(state, c.name('__rv_stop'));
    c.error(state);
    throw new Error('unreachable: lua_error returned');
  }

  /**
   * Wraps a wasmoon factory: pass a function that makes it (`() => new LuaFactory()`) so the
   * platform can capture the wasm exports and call them directly, or a factory made earlier
   * with the exports of its wasm instance (`wasmExports`, as src/worker does); a factory alone
   * works too, through wasmoon's slower checked wrappers.
   */
  static async create(
    factory: LuaFactory | (() => LuaFactory | Promise<LuaFactory>),
    wasmExports?: WebAssembly.Exports,
    options: PlatformOptions = {},
  ): Promise<LuaPlatform> {
    if (typeof factory !== 'function') {
      const exports = wasmExports && typeof wasmExports.lua_newstate === 'function' ? (wasmExports as Record<string, CFunction>) : undefined;
      return new LuaPlatform(await factory.getLuaModule(), exports, options);
    }
    const made = await captureExports(factory);
    return new LuaPlatform(await made.factory.getLuaModule(), made.exports, options);
  }

  /** A buffer of at least `size` bytes for text on its way into Lua (copied there at once). */
  scratchBuffer(size: number): number {
    if (size > this.scratchSize) {
      if (this.scratch !== 0) this.c.free(this.scratch);
      this.scratchSize = Math.max(size, 256, this.scratchSize * 2);
      this.scratch = this.c.malloc(this.scratchSize);
    }
    return this.scratch;
  }

  /**
   * Creates a fresh Lua state with the standard libraries open, and with a template, set up
   * as it says: copied back from the template's saved image when a region with one is free.
   */
  async newVm(options: VmOptions = {}): Promise<LuaVm> {
    const template = options.template;
    if (template === undefined) return this.plainVm(options.memoryLimit, options.owner);
    const region = this.idleRegion(template);
    region.busy = true;
    const vm = new LuaVm(this, region.id, options.memoryLimit, template.modules, region);
    vm.owner = options.owner;
    vm.memory = options.memory;
    this.vms.set(region.id, vm);
    // The region itself is the VM's while it lives, whether or not it fills it.
    this.charge(vm, region.footprint);
    const saved = region.restore(template);
    if (saved !== undefined) {
      vm.attach(saved);
      return vm;
    }
    region.reset();
    try {
      // Every allocation, the build's too, goes through the region.
      const state = this.c.newstate(this.allocator, region.id) as number;
      if (state === 0) throw new Error('no memory for a new Lua state');
      this.c.atpanic(state, this.panic);
      vm.attach(state);
      this.setUp(state, region.id);
      template.build(vm);
      region.save(template, state);
    } catch (error) {
      vm.close();
      throw error;
    }
    return vm;
  }

  /** A VM with no template: a state of its own in the heap, freed by lua_close. */
  private plainVm(limit: number | undefined, owner: object | undefined): LuaVm {
    const id = this.nextVm++;
    const vm = new LuaVm(this, id, limit);
    vm.owner = owner;
    this.vms.set(id, vm);
    // Made with the C allocator: the Engine's own set-up runs without a JS call per
    // allocation; limitMemory() switches to the counting allocator before prompt code runs.
    const state = this.c.newstateL();
    vm.attach(state);
    this.setUp(state, id);
    return vm;
  }

  private setUp(state: number, id: number): void {
    this.openLibraries(state);
    // The hook finds its VM by this global; the sandbox's code never sees the real globals.
    this.c.pushinteger(state, BigInt(id));
    this.c.setglobal(state, this.c.name('__rv_vm'));
  }

  /**
   * A free region for a template VM: one holding that template's image if there is one, else
   * any free one, else a new one while there may be more, else a region of no bytes (the VM
   * is built afresh and every block comes from malloc).
   */
  private idleRegion(template: VmTemplate): MemoryRegion {
    let free: MemoryRegion | undefined;
    for (const region of this.regions) {
      if (region.busy) continue;
      if (region.holds(template)) return region;
      free ??= region;
    }
    if (free) return free;
    if (this.regions.length < this.maxRegions) {
      const block = this.c.malloc(this.regionBytes + 15) as number;
      if (block !== 0) {
        const start = (block + 15) & ~15;
        const region = this.newRegion(start, start + this.regionBytes);
        this.regions.push(region);
        return region;
      }
    }
    return this.newRegion(0, 0);
  }

  /**
   * A region whose growth is charged to the VM it holds at the time: bound once per region,
   * not per VM. A closure made per VM for the long-lived region kept ended runs reachable to
   * V8's scavenges (W1: 3 MB of a run's objects survived each, against 0.15 MB; see
   * docs/performance.md), and promoted them until the next full collection.
   */
  private newRegion(start: number, end: number): MemoryRegion {
    const region = new MemoryRegion(this.nextVm++, start, end, this.heap);
    region.charge = (bytes) => {
      const vm = this.vms.get(region.id);
      return vm === undefined || this.charge(vm, bytes);
    };
    return region;
  }

  /**
   * Opens the standard libraries the sandbox hands out (and debug, which the runtime keeps to
   * itself). io, os and package are never reachable from a section, and opening them is a
   * third of a new state's cost.
   */
  private openLibraries(state: number): void {
    if (this.libraries === null) {
      this.c.openlibs(state);
      return;
    }
    for (const library of this.libraries) {
      this.c.requiref(state, library.name, library.open, 1);
      this.c.settop(state, -2);
    }
  }

  /** Gives back what a closing VM's region held of the platform's memory and its run's. */
  uncharge(vm: LuaVm, bytes: number): void {
    this.memoryUsed -= bytes;
    if (vm.memory) vm.memory.used -= bytes;
  }

  /** Bytes all template VMs hold now (their footprints). */
  get memoryHeld(): number {
    return this.memoryUsed;
  }

  /** Forgets a closed VM. */
  release(id: number): void {
    this.vms.delete(id);
  }

  /**
   * Closes every VM of `owner` (or charged to that RunMemory) where it stands, for an owner that will never drive them again
   * (a run object's memory dropped while the run waited). Their threads refuse to resume.
   */
  closeVmsOf(owner: object): void {
    for (const vm of [...this.vms.values()]) if (vm.owner === owner || vm.memory === owner) vm.close();
  }

  /** How many VMs are open. */
  get openVms(): number {
    return this.vms.size;
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
      if (loaded !== LUA_OK) throw new Error(`runtime chunk ${chunk.name}: ${readScalar(this, state, -1)}`);
      // Stripped of debug info: a third smaller and faster to load into every VM. The
      // runtime raises its errors without positions anyway (level 0).
      lua.lua_pushboolean(state, 1);
      const dumpedOk = lua.lua_pcallk(state, 2, 1, 0, 0, null);
      if (dumpedOk !== LUA_OK) throw new Error(`runtime chunk ${chunk.name}: ${readScalar(this, state, -1)}`);
      const dumped = luaBytes(this, state, -1).slice();
      const pointer = lua.module._malloc(dumped.length);
      lua.module.HEAPU8.set(dumped, pointer);
      return { pointer, size: dumped.length };
    } finally {
      lua.lua_close(state);
    }
  }

  private callLeaf(state: number): number {
    const c = this.c;
    // Read as doubles: small integers, and no BigInt made on every leaf call.
    const vm = this.vms.get(c.tonumberx(state, upvalue(1), 0) as number);
    const leaf = c.tonumberx(state, upvalue(2), 0) as number;
    if (leaf <= FIRST_NATIVE) {
      const native = nativeOf(leaf);
      if (!vm || native === undefined) {
        pushScalar(this, state, 'internal error in the Engine: a Lua VM called a native after it was closed');
        return c.error(state);
      }
      const results = callPatternNative(this.nativeHost, vm, state, native);
      // A pause decided while it matched (a C function cannot yield) is taken at the next instruction.
      if (vm.pauseDue && !vm.halting) {
        vm.earlyHook = true;
        c.sethook(state, this.hook, LUA_MASKCOUNT, 1);
      }
      return results;
    }
    if (leaf === USERDATA_LEAF) {
      c.newuserdatauv(state, 0, 0);
      return 1;
    }
    if (leaf === WATCH_LEAF) {
      const thread = c.tothread(state, 1) as number;
      c.sethook(thread, this.hook, LUA_MASKCOUNT, HOOK_EVERY);
      vm?.threads.add(thread);
      return 0;
    }
    if (leaf === MODULE_LEAF && vm) {
      const chunk = vm.module(String(readScalar(this, state, 1)));
      const { pointer, size } = this.bytecode(chunk);
      if (c.loadbufferx(state, pointer, size, c.name(`=${chunk.name}`), c.name('b')) !== LUA_OK) return c.error(state);
      return 1;
    }
    const args = readValues(this, state, 1, c.gettop(state));
    let result: ReturnType<LuaLeaf>;
    try {
      if (!vm) throw new Error('a Lua VM called a leaf after it was closed');
      result = vm.callLeaf(leaf, args);
    } catch (error) {
      // Raises in Lua; wasmoon's own function wrapper does the same (lua_error unwinds).
      pushScalar(this, state, `internal error in the Engine: ${error instanceof Error ? error.message : String(error)}`);
      return c.error(state);
    }
    // A leaf that made the VM halt (a run error found inside it) stops the thread at its
    // next instruction rather than up to HOOK_EVERY instructions later.
    if (vm?.halting) c.sethook(state, this.hook, LUA_MASKCOUNT, 1);
    if (result === undefined) return 0;
    const values = Array.isArray(result) ? result : [result];
    // A C function may push only LUA_MINSTACK (20) values unasked; a model round with many
    // tool calls answers far more, which would write past the stack.
    if (!c.checkstack(state, values.length)) {
      pushScalar(this, state, `internal error in the Engine: an answer of ${values.length} values does not fit a Lua stack`);
      return c.error(state);
    }
    for (const value of values) pushScalar(this, state, value);
    return values.length;
  }

  private countHook(state: number): void {
    const c = this.c;
    c.getglobal(state, c.name('__rv_vm'));
    const vm = this.vms.get(Number(c.tointegerx(state, -1, 0)));
    c.settop(state, -2);
    if (vm && this.stackReadable && this.stackBytes(state) > STACK_SLOTS * 16) {
      // Raised from a hook, an error would run an xpcall handler, or later a dead coroutine's
      // __close, with hooks off (Lua leaves them off when a hook unwinds): so the overflow
      // ends the run, through the stop, which no handler sees. The position is Lua's own.
      c.where(state, 0);
      const where = String(readScalar(this, state, -1) ?? '');
      c.settop(state, -2);
      vm.overflow(`${where}stack overflow`);
      vm.halting = true;
      this.raiseStop(state);
    }
    vm?.settleMemory();
    if (vm?.earlyHook && !vm.halting) {
      // The early hook a native asked for, to take the pause its matching earned: no
      // instructions to count.
      vm.earlyHook = false;
      c.sethook(state, this.hook, LUA_MASKCOUNT, HOOK_EVERY);
      this.pauseIfDue(vm, state);
      return;
    }
    const verdict = vm ? vm.countHook(HOOK_EVERY) : 'stop';
    if (verdict === 'stop') {
      // Every other thread of the VM stops too, at its next hook or leaf call.
      if (vm) vm.halting = true;
      // From now on every instruction comes back here and raises again.
      this.raiseStop(state);
    }
    if (vm && verdict === 'pause') vm.pauseDue = true;
    if (vm) this.pauseIfDue(vm, state);
  }

  /**
   * Pauses the thread when a pause is due and it can yield; otherwise the pause stays due
   * for the next hook (one due inside an xpcall handler or a gsub callback is not lost).
   */
  private pauseIfDue(vm: LuaVm, state: number): void {
    if (!vm.pauseDue || !this.c.isyieldable(state)) return;
    vm.pauseDue = false;
    vm.paused = true;
    // From a hook, lua_yieldk returns here and Lua yields once the hook returns.
    this.c.yieldk(state, 0, 0, 0);
  }

  /** The C allocator luaL_newstate uses (it and the counting one share wasm's malloc). */
  get cAllocator(): number {
    return this.lauxlib().allocator;
  }

  /** The panic function luaL_newstate installs, for states made with lua_newstate. */
  private get panic(): number {
    return this.lauxlib().panic;
  }

  private lauxlib(): { allocator: number; panic: number } {
    if (this.lauxlibFunctions === undefined) {
      const state = this.c.newstateL();
      this.lauxlibFunctions = { allocator: this.c.getallocf(state, 0) as number, panic: this.c.atpanic(state, 0) as number };
      this.c.close(state);
    }
    return this.lauxlibFunctions;
  }
  private lauxlibFunctions: { allocator: number; panic: number } | undefined;

  private allocate(ud: number, pointer: number, oldSize: number, newSize: number): number {
    const vm = this.vms.get(ud);
    const region = vm?.region;
    const previous = pointer === 0 ? 0 : oldSize;
    const counting = vm !== undefined && vm.counting;
    // Blocks made before counting began (the Engine's set-up) are not counted, so a count is
    // never let below zero.
    if (vm !== undefined && vm.stackBytes > 0 && pointer !== 0) vm.forgetStack(pointer);
    if (newSize === 0) {
      if (pointer !== 0) {
        if (region) region.release(pointer, oldSize);
        else this.c.free(pointer);
      }
      if (counting) vm.heapBytes = Math.max(0, vm.heapBytes - previous);
      return 0;
    }
    this.refusal = undefined;
    this.allocating = pointer;
    this.allocatingOld = oldSize;
    this.allocatingNew = newSize;
    this.stackGrant = false;
    const retry = vm?.pendingRefusal !== undefined && this.settleRefusal(vm, pointer, oldSize, newSize);
    let moved = 0;
    if (counting && vm.memoryLimit !== undefined && vm.heapBytes - vm.stackBytes - previous + newSize > vm.memoryLimit && !this.growingStack(vm)) {
      this.refusal = vmLimitMessage(vm.memoryLimit);
    } else {
      moved = region ? region.realloc(pointer, previous, newSize) : (this.c.realloc(pointer, newSize) as number);
    }
    if (moved !== 0) {
      if (counting) vm.heapBytes = Math.max(0, vm.heapBytes + newSize - previous);
      if (this.stackGrant && vm) vm.keepStack(moved, newSize);
    } else if (this.refusal !== undefined && vm) {
      if (retry || this.growingStack(vm)) vm.exceedMemory(this.refusal);
      else vm.pendingRefusal = { pointer, oldSize, newSize, message: this.refusal };
    }
    return moved;
  }

  /**
   * A cap refused the VM's last request. Lua answers most refusals with a full collection
   * (frees only) and the same request again: refused again, or followed by any other request
   * (Lua's buffers and stacks raise `not enough memory` without a second try), the memory is
   * spent, and the run ends with `Limit`, which no pcall catches: the count hook stops the
   * thread. Granted the second time, the collection made room and nothing happened.
   */
  private settleRefusal(vm: LuaVm, pointer: number, oldSize: number, newSize: number): boolean {
    const pending = vm.pendingRefusal!;
    vm.pendingRefusal = undefined;
    if (pending.pointer === pointer && pending.oldSize === oldSize && pending.newSize === newSize) return true;
    vm.exceedMemory(pending.message);
    return false;
  }

  /**
   * True when the request under way is a thread's stack growing: a realloc of its stack
   * block, or (Lua builds that move the stack to a new block) a new vector of the size
   * luaD_growstack asks for, twice the thread's stack or Lua's own largest, plus EXTRA_STACK.
   */
  private growingStack(vm: LuaVm): boolean {
    if (!this.stackReadable) return false;
    const pointer = this.allocating;
    const words = this.lua.module.HEAP32;
    if (pointer !== 0) {
      for (const thread of vm.threads) if (words[(thread + STACK_OFFSET) >> 2] === pointer) return (this.stackGrant = true);
      return false;
    }
    if (this.allocatingOld !== 0 || this.allocatingNew % 16 !== 0) return false;
    const slots = this.allocatingNew / 16 - EXTRA_STACK;
    if (slots === LUAI_MAXSTACK || slots === ERRORSTACKSIZE) return (this.stackGrant = true);
    for (const thread of vm.threads) if (slots === (this.stackBytes(thread) / 16) * 2) return (this.stackGrant = true);
    return false;
  }
  /** True once growingStack let the request under way pass the VM's cap. */
  private stackGrant = false;

  /**
   * Charges `bytes` more (or, negative, fewer) of the heap to a VM, its run and the platform;
   * false refuses. Before the VM's limits hold (the Engine's set-up) nothing is refused. A
   * thread's stack may pass the VM's cap (STACK_SLOTS bounds it) but not its run's budget.
   */
  private charge(vm: LuaVm, bytes: number): boolean {
    if (bytes > 0 && vm.counting) {
      const refusal = this.chargeRefusal(vm, bytes);
      if (refusal !== undefined) {
        this.refusal = refusal;
        return false;
      }
    }
    this.memoryUsed += bytes;
    if (vm.memory) vm.memory.used += bytes;
    return true;
  }

  /** Ends the VM's run as Limit when what the VM holds already passes a cap (checked once its set-up is done). */
  checkMemory(vm: LuaVm): void {
    if (!vm.region) return;
    const refusal = this.chargeRefusal(vm, 0);
    if (refusal !== undefined) vm.exceedMemory(refusal);
  }

  private chargeRefusal(vm: LuaVm, bytes: number): string | undefined {
    const limit = vm.memoryLimit;
    if (limit !== undefined && vm.region!.footprint - vm.stackBytes + bytes > limit && !this.growingStack(vm)) return vmLimitMessage(limit);
    const memory = vm.memory;
    if (memory && memory.used + bytes > memory.limit) {
      return `the run's Lua VMs together held more than its memory budget of ${formatBytes(memory.limit)} (runMemoryBytes)`;
    }
    if (this.memoryUsed + bytes > this.memoryBytes && !this.makeRoom(vm, bytes)) {
      return `the server's Lua memory of ${formatBytes(this.memoryBytes)} is full, and this run holds the most of it`;
    }
    return undefined;
  }

  /**
   * Frees the platform's memory for `bytes` more by ending, with `Limit`, the runs that hold
   * the most, one by one, while one of them holds more than the asking VM's run; their VMs
   * close where they stand (none of them is running: only the asking VM is).
   */
  private makeRoom(vm: LuaVm, bytes: number): boolean {
    while (this.memoryUsed + bytes > this.memoryBytes) {
      let largest: RunMemory | undefined;
      for (const other of this.vms.values()) {
        const memory = other.memory;
        if (memory && memory !== vm.memory && (largest === undefined || memory.used > largest.used)) largest = memory;
      }
      if (!largest || largest.used <= (vm.memory?.used ?? 0)) return false;
      largest.exceed(
        `the server's Lua memory of ${formatBytes(this.memoryBytes)} was full, and this run held the most of it (${formatBytes(largest.used)})`,
      );
      for (const other of [...this.vms.values()]) if (other.memory === largest) other.close();
    }
    return true;
  }
}

/** One Lua state. Close it when the section entry ends. */
export class LuaVm {
  private state = 0;
  private readonly leaves: LuaLeaf[] = [];
  /** Bytes the Lua heap holds (tracked when the VM has a memory limit). */
  heapBytes = 0;
  /** True once the VM's allocations count against its memory limit (limitMemory). */
  counting = false;
  /** Whoever the VM works for (VmOptions.owner). */
  owner: object | undefined;
  /** The run's share of Lua memory the VM is charged to (VmOptions.memory). */
  memory: RunMemory | undefined;
  /** The VM's threads whose stacks may grow (its main state, the entry's thread, watched coroutines). */
  readonly threads = new Set<number>();
  /** Stack blocks let past the VM's cap (LuaPlatform.growingStack), and their bytes: the cap counts the rest. */
  private readonly stacks = new Map<number, number>();
  stackBytes = 0;

  /** Records a stack block let past the cap. */
  keepStack(pointer: number, size: number): void {
    this.stacks.set(pointer, size);
    this.stackBytes += size;
  }

  /** Forgets a stack block let past the cap, as it moves or is freed. */
  forgetStack(pointer: number): void {
    const size = this.stacks.get(pointer);
    if (size === undefined) return;
    this.stacks.delete(pointer);
    this.stackBytes -= size;
  }

  /** The last request a cap refused, until Lua asks again or asks for something else (LuaPlatform.settleRefusal). */
  pendingRefusal: { pointer: number; oldSize: number; newSize: number; message: string } | undefined;

  /** Ends the VM's run with `Limit` for its memory, and stops the running thread at its next count. */
  exceedMemory(message: string): void {
    this.pendingRefusal = undefined;
    this.memory?.exceed(message);
    this.halting = true;
    // The entry's own threads stop at their next instruction (a user coroutine at its next count).
    for (const thread of this.entryThreads) this.platform.c.sethook(thread, this.platform.hook, LUA_MASKCOUNT, 1);
  }
  /** The threads newThread made: alive as long as the VM (its main stack holds them). */
  private readonly entryThreads: number[] = [];

  /** Settles a refusal Lua never asked again about (it raised `not enough memory` at once); true when there was one. */
  settleMemory(): boolean {
    const pending = this.pendingRefusal;
    if (pending === undefined) return false;
    this.exceedMemory(pending.message);
    return true;
  }
  /** Set when the count hook paused a thread; the runtime reads and clears it (takePaused). */
  paused = false;
  /** Set to stop the running thread at its next instruction, once the current leaf returns. */
  halting = false;
  /** Pattern steps counted and not yet charged to the count hook (pattern-natives.ts). */
  patternSteps = 0;
  private hookHandler: (count: number) => HookVerdict = () => 'go';

  constructor(
    private readonly platform: LuaPlatform,
    readonly id: number,
    readonly memoryLimit: number | undefined,
    /** The runtime modules the VM's module loader serves (its template's). */
    private readonly modules: Record<string, RuntimeChunk> = {},
    /** Where a template VM's blocks live. */
    readonly region?: MemoryRegion,
  ) {}

  /** Binds the lua_State once it exists (the allocator needs the VM first). */
  attach(state: number): void {
    this.state = state;
    this.threads.add(state);
  }

  /** Decides what the count hook does; called every HOOK_EVERY instructions of a watched thread. */
  onCount(handler: (count: number) => HookVerdict): void {
    this.hookHandler = handler;
  }

  /** Decides how a thread's stack passing STACK_SLOTS ends the run (the VM halts after it). */
  onOverflow(handler: (message: string) => void): void {
    this.overflowHandler = handler;
  }

  /** Reports a stack overflow (the platform calls this, then stops the thread). */
  overflow(message: string): void {
    this.overflowHandler(message);
  }
  private overflowHandler: (message: string) => void = () => {};

  /** The count hook's verdict (the platform calls this). */
  countHook(count: number): HookVerdict {
    return this.halting ? 'stop' : this.hookHandler(count);
  }

  /**
   * Charges work done outside Lua's instructions (pattern matching) as `count` instructions;
   * true when the run must stop. A pause verdict is dropped: a C function cannot yield.
   */
  charge(count: number): boolean {
    const verdict = this.countHook(count);
    if (verdict === 'pause') this.pauseDue = true;
    if (verdict !== 'stop') return false;
    this.halting = true;
    return true;
  }
  /** A pause the count hook decided that the thread could not take yet (in a C function, or not yieldable). */
  pauseDue = false;
  /** True while the thread's next instruction runs the hook only to take a due pause. */
  earlyHook = false;

  /** True once after the count hook paused a thread of this VM. */
  takePaused(): boolean {
    const paused = this.paused;
    this.paused = false;
    return paused;
  }

  /** Calls leaf number `index` (the trampoline's second upvalue). */
  callLeaf(index: number, args: LuaScalar[]): ReturnType<LuaLeaf> {
    const leaf = this.leaves[index];
    if (!leaf) throw new Error(`leaf ${index} of this VM is not bound`);
    // Missing trailing arguments arrive as null, as Lua's nil would.
    while (args.length < leaf.length) args.push(null);
    return leaf(...args);
  }

  /** Sets a global to a Lua function that calls the JS function bindLeaf binds to `index`. */
  defineLeaf(name: string, index: number): void {
    this.pushClosure(index);
    this.platform.c.setglobal(this.state, this.platform.c.name(name));
  }

  /** What the leaf defined with `index` calls, in this VM. */
  bindLeaf(index: number, leaf: LuaLeaf): void {
    this.leaves[index] = leaf;
  }

  /** Sets a global to a NULL light userdata: the value json.null stands for. */
  setNull(name: string): void {
    this.platform.c.pushlightuserdata(this.state, 0);
    this.platform.c.setglobal(this.state, this.platform.c.name(name));
  }

  /**
   * Sets a global to a function that returns a fresh, empty full userdata: Lua itself cannot
   * make one, and Tool, Pack and model objects must be userdata.
   */
  setUserdataFactory(name: string): void {
    this.pushClosure(USERDATA_LEAF);
    this.platform.c.setglobal(this.state, this.platform.c.name(name));
  }

  /** Sets a global to a function that puts the count hook on the thread passed to it. */
  setWatchFunction(name: string): void {
    this.pushClosure(WATCH_LEAF);
    this.platform.c.setglobal(this.state, this.platform.c.name(name));
  }

  /**
   * Sets the globals `<prefix>find`, `match`, `gmatch` and `gsub` to the metered pattern
   * functions (pattern-natives.ts), C functions to Lua like the string library's own.
   */
  setPatternNatives(prefix: string): void {
    const c = this.platform.c;
    for (const [name, index] of Object.entries(NATIVE_INDEX) as [PatternNative, number][]) {
      if (name === 'gmatch_step') continue;
      if (name === 'rep' || name === 'move') {
        // The C function it guards is its third upvalue.
        c.getglobal(this.state, c.name(name === 'rep' ? 'string' : 'table'));
        c.natives.lua_getfield(this.state, -1, c.name(name));
        c.natives.lua_copy(this.state, -1, -2);
        c.settop(this.state, -2);
        this.platform.pushNative(this.state, this.id, index, 1);
      } else this.pushClosure(index);
      c.setglobal(this.state, c.name(prefix + name));
    }
  }

  /** Sets a global to a function that loads one of the template's modules by name and returns it uncalled. */
  setModuleLoader(name: string): void {
    this.pushClosure(MODULE_LEAF);
    this.platform.c.setglobal(this.state, this.platform.c.name(name));
  }

  /** The runtime module of that name. */
  module(name: string): RuntimeChunk {
    const chunk = Object.hasOwn(this.modules, name) ? this.modules[name] : undefined;
    if (!chunk) throw new Error(`no runtime module named ${name}`);
    return chunk;
  }

  private pushClosure(leaf: number): void {
    const c = this.platform.c;
    c.pushinteger(this.state, BigInt(this.id));
    c.pushinteger(this.state, BigInt(leaf));
    c.pushcclosure(this.state, this.platform.trampoline, 2);
  }

  /** Loads a runtime chunk (as bytecode) and runs it to completion with the given arguments. */
  runChunk(chunk: RuntimeChunk, args: LuaScalar[] = []): LuaScalar[] {
    const platform = this.platform;
    const { pointer, size } = platform.bytecode(chunk);
    const c = platform.c;
    const state = this.state;
    const base = c.gettop(state);
    if (c.loadbufferx(state, pointer, size, c.name(`=${chunk.name}`), c.name('b')) !== LUA_OK) {
      const message = String(readScalar(platform, state, -1));
      c.settop(state, base);
      throw new Error(`loading ${chunk.name}: ${message}`);
    }
    ensureStack(platform, state, args.length);
    for (const arg of args) pushScalar(platform, state, arg);
    return this.protectedCall(base, args.length, chunk.name);
  }

  /** Calls the global function `name` with no arguments and waits for it (it must not yield). */
  callGlobal(name: string): void {
    const c = this.platform.c;
    const base = c.gettop(this.state);
    if (c.getglobal(this.state, c.name(name)) !== LUA_TFUNCTION) {
      c.settop(this.state, base);
      throw new Error(`no Lua function named ${name}`);
    }
    this.protectedCall(base, 0, name);
  }

  /**
   * Calls the function pushed above `base`, below its `argCount` arguments; answers its results
   * and puts the stack back at `base`, or raises the Lua error naming `what` it ran.
   */
  private protectedCall(base: number, argCount: number, what: string): LuaScalar[] {
    const platform = this.platform;
    const c = platform.c;
    const state = this.state;
    if (c.pcallk(state, argCount, -1, 0, 0, 0) !== LUA_OK) {
      const message = String(readScalar(platform, state, -1));
      c.settop(state, base);
      throw new Error(`running ${what}: ${message}`);
    }
    const values = readValues(platform, state, base + 1, c.gettop(state));
    c.settop(state, base);
    return values;
  }

  /** A new coroutine that will call the global function `name` when first resumed. */
  newThread(functionName: string): LuaThread {
    const c = this.platform.c;
    // lua_newthread leaves the thread on the main stack, which keeps it from being collected.
    const thread = c.newthread(this.state) as number;
    if (c.getglobal(thread, c.name(functionName)) !== LUA_TFUNCTION) throw new Error(`no Lua function named ${functionName}`);
    this.threads.add(thread);
    this.entryThreads.push(thread);
    return new LuaThread(this.platform, thread, this);
  }

  /** Bytes the Lua heap holds, when the VM tracks them. */
  memoryUsed(): number | undefined {
    return this.memoryLimit === undefined ? undefined : this.heapBytes;
  }

  /**
   * From now on every allocation goes through the counting allocator and the VM's memory
   * limit holds. Called once the Engine's own set-up is done, before prompt code runs.
   */
  limitMemory(): void {
    if (this.memoryLimit === undefined || this.counting) return;
    this.counting = true;
    // What the set-up took (a VM built afresh, outside any region) counts from now.
    this.platform.checkMemory(this);
    // A template VM allocates through the counting allocator from the start.
    if (!this.region) this.platform.c.setallocf(this.state, this.platform.allocator, this.id);
  }

  /**
   * Ends the VM; safe to call twice. A template VM's region is vacated: no Lua runs after the
   * entry (no finalizers), and nothing is freed object by object.
   */
  close(): void {
    if (this.isClosed) return;
    this.closed = true;
    if (this.region) {
      // Vacating gives back the chunks and blocks; the region itself is given back here.
      this.region.vacate();
      this.platform.uncharge(this, this.region.capacity);
    } else if (this.state !== 0) {
      // Freed by the C allocator: counting frees of a state about to vanish is wasted work.
      if (this.counting) this.platform.c.setallocf(this.state, this.platform.cAllocator, 0);
      this.platform.c.close(this.state);
    }
    this.state = 0;
    this.platform.release(this.id);
  }

  /** True once the VM is closed: its memory may hold another VM by now. */
  get isClosed(): boolean {
    return this.closed;
  }
  private closed = false;
}

/** A coroutine driven from JS: start it, read what it yields, resume it with answers. */
export class LuaThread {
  constructor(
    private readonly platform: LuaPlatform,
    private readonly state: number,
    private readonly vm: LuaVm,
  ) {}

  /** Resumes the coroutine with the given values (the first resume passes the function's arguments). */
  resume(args: LuaScalar[]): ResumeResult {
    // A closed VM's memory may already hold another VM.
    if (this.vm.isClosed) throw new Error('a Lua thread was resumed after its VM was closed');
    const platform = this.platform;
    const c = platform.c;
    const state = this.state;
    ensureStack(platform, state, args.length);
    for (const arg of args) pushScalar(platform, state, arg);
    const result = c.resume(state, 0, args.length, platform.countWord);
    const count = platform.lua.module.HEAP32[platform.countWord >> 2]!;
    const top = c.gettop(state) as number;
    if (result === LUA_YIELD || result === LUA_OK) {
      const values = readValues(platform, state, top - count + 1, top);
      c.settop(state, top - count);
      return { status: result === LUA_YIELD ? 'yield' : 'return', values };
    }
    const message = String(readScalar(platform, state, -1) ?? 'unknown Lua error');
    c.settop(state, 0);
    return { status: 'error', message };
  }
}

/** Makes room for `count` more values on a Lua stack (beyond the 20 the C API guarantees). */
function ensureStack(platform: LuaPlatform, state: number, count: number): void {
  if (!platform.c.checkstack(state, count)) throw new Error(`${count} values do not fit a Lua stack`);
}

// lua_pushinteger takes a BigInt; the counts and positions an answer carries are small, and
// taking theirs from a table saves making one per value.
const SMALL_INTEGERS = Array.from({ length: 1024 }, (_, n) => BigInt(n));

function pushScalar(platform: LuaPlatform, state: number, value: LuaScalar): void {
  const c = platform.c;
  if (value === null) c.pushnil(state);
  else if (typeof value === 'boolean') c.pushboolean(state, value ? 1 : 0);
  else if (typeof value === 'number') {
    if (Number.isInteger(value) && Number.isSafeInteger(value)) c.pushinteger(state, value >= 0 && value < SMALL_INTEGERS.length ? SMALL_INTEGERS[value]! : BigInt(value));
    else c.pushnumber(state, value);
  } else {
    // Through a scratch buffer with an explicit length, so NUL bytes inside text survive.
    const pointer = platform.scratchBuffer(value.length * 3 + 1);
    const heap = platform.lua.module.HEAPU8;
    c.pushlstring(state, pointer, value.length <= SHORT_TEXT_OUT ? writeShortText(value, heap, pointer) : encoder.encodeInto(value, heap.subarray(pointer, pointer + value.length * 3 + 1)).written);
  }
}

/**
 * At these lengths or less, text crosses between JS and Lua faster byte by byte than through
 * TextEncoder or TextDecoder, whose every call costs 0.1-0.2 us whatever the length (ids,
 * tool names and results, numbers as text: most of what a model round hands over). Measured
 * in Node and in workerd: writing by hand costs about 2.5 ns a character, reading about 6.
 */
const SHORT_TEXT_OUT = 32;
const SHORT_TEXT_IN = 16;

/** Writes short text's UTF-8 at `pointer`; answers the byte count. */
function writeShortText(text: string, heap: Uint8Array, pointer: number): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return encoder.encodeInto(text, heap.subarray(pointer, pointer + text.length * 3 + 1)).written;
    heap[pointer + i] = code;
  }
  return text.length;
}

/** Short text from its UTF-8 bytes at `pointer`. */
function readShortText(heap: Uint8Array, pointer: number, length: number): string {
  let text = '';
  for (let i = pointer; i < pointer + length; i++) {
    const code = heap[i]!;
    if (code >= 0x80) return decoder.decode(heap.subarray(pointer, pointer + length));
    text += String.fromCharCode(code);
  }
  return text;
}

function readValues(platform: LuaPlatform, state: number, from: number, to: number): LuaScalar[] {
  const values: LuaScalar[] = [];
  for (let index = from; index <= to; index++) values.push(readScalar(platform, state, index));
  return values;
}

const decoder = new TextDecoder();

function readScalar(platform: LuaPlatform, state: number, index: number): LuaScalar {
  const c = platform.c;
  const type = c.type(state, index);
  switch (type) {
    case LUA_TNIL:
      return null;
    case LUA_TBOOLEAN:
      return c.toboolean(state, index) !== 0;
    case LUA_TNUMBER:
      // An integer too: as a double, rounded as Number(BigInt) would round it, with no BigInt made.
      return c.tonumberx(state, index, 0) as number;
    case LUA_TSTRING: {
      const pointer = c.tolstring(state, index, platform.lengthWord) as number;
      const heap = platform.lua.module;
      const length = heap.HEAP32[platform.lengthWord >> 2]!;
      return length <= SHORT_TEXT_IN ? readShortText(heap.HEAPU8, pointer, length) : decoder.decode(heap.HEAPU8.subarray(pointer, pointer + length));
    }
    default:
      return `<${platform.lua.lua_typename(state, type)}>`;
  }
}

/** A view of a Lua string's bytes in the wasm heap (valid until Lua runs again). */
function luaBytes(platform: LuaPlatform, state: number, index: number): Uint8Array {
  const pointer = platform.c.tolstring(state, index, platform.lengthWord) as number;
  const heap = platform.lua.module;
  const length = heap.HEAP32[platform.lengthWord >> 2]!;
  return heap.HEAPU8.subarray(pointer, pointer + length);
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

/** The Limit message of a VM past its memory cap. */
function vmLimitMessage(limit: number): string {
  return `a Lua VM of the run held more than its memory limit of ${formatBytes(limit)} (memoryBytes)`;
}
