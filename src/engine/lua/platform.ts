/**
 * The platform: one per isolate. It owns the wasm module (one heap), the wasm functions made
 * once (the JS leaf trampoline, the allocator, the count hook), the runtime compiled once to
 * bytecode (runtime-bytecode.ts), and the memory regions template VMs live in
 * (memory-region.ts); what it and its VMs are made with is platform-options.ts. The
 * trampoline and the count hook are here because they find their VM by id among the platform's.
 */
import { CApi, sandboxLibraries, type LuaState, type Pointer } from './c-api.ts';
import { LUA_MASKCOUNT, LUA_OK, upvalue } from './lua-constants.ts';
import { FIRST_NATIVE, HOOK_EVERY, LuaVm, MODULE_LEAF, USERDATA_LEAF, WATCH_LEAF, type LuaLeaf, type RuntimeChunk, type VmTemplate } from './lua-vm.ts';
import { MemoryRegion, type WasmHeap } from './memory-region.ts';
import type { NativeHost } from './native-stack.ts';
import { callPatternNative, nativeOf } from './pattern-natives.ts';
import { DEFAULT_PLATFORM_MEMORY, DEFAULT_REGION_BYTES, DEFAULT_REGIONS, type PlatformOptions, type VmOptions } from './platform-options.ts';
import { ProtectedCalls } from './protected-call.ts';
import { RuntimeBytecode } from './runtime-bytecode.ts';
import { pushScalar, readScalar, readValues, reserveScratch } from './values.ts';
import { VmMemory } from './vm-memory.ts';
import { WaitingRuns } from './waiting-runs.ts';
import { captureExports, functionTable, luaExports, type EmscriptenModule, type LuaFactory, type LuaWasm, type WasmExports } from './wasm-exports.ts';

/** The scratch buffer's size kept between texts (trimScratch). */
const SCRATCH_KEPT = 1024 * 1024;

/**
 * What a leaf's exception says in the run's error, which clients read: the words of an Error
 * the Engine threw itself (a broken invariant, said as such), else only the exception's kind
 * (a TypeError, a RangeError, a wasm RuntimeError), whose text is the runtime's, not ours.
 */
function leafFailure(error: unknown): string {
  if (error instanceof Error && Object.getPrototypeOf(error) === Error.prototype) return error.message;
  return `a ${error instanceof Error ? error.name : 'value'} was thrown in a leaf`;
}

/** One wasm module, the shared wasm functions and the compiled runtime; one per isolate. */
export class LuaPlatform {
  /** The runtime's chunks as bytecode (runtime-bytecode.ts). */
  private readonly runtime: RuntimeBytecode;
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
  /** What the VMs hold and may hold, and the allocator that keeps to it (vm-memory.ts). */
  readonly memory: VmMemory;
  /** The runs that only wait, whose VMs go first when the memory is full (waiting-runs.ts). */
  private readonly waiting = new WaitingRuns();
  private readonly nativeHost: NativeHost;
  /** Calls into Lua from outside running Lua code, under lua_pcall (protected-call.ts). */
  readonly protectedCalls: ProtectedCalls;

  private constructor(
    readonly lua: LuaWasm,
    exports: WasmExports | undefined,
    options: PlatformOptions,
  ) {
    const module = lua.module as EmscriptenModule;
    this.maxRegions = options.regions ?? DEFAULT_REGIONS;
    this.regionBytes = options.regionBytes ?? DEFAULT_REGION_BYTES;
    this.direct = exports !== undefined;
    this.runtime = new RuntimeBytecode(lua, this);
    this.c = new CApi(lua, exports);
    const table = functionTable(exports);
    this.libraries = exports ? sandboxLibraries(exports, table, this.c) : null;
    this.memory = new VmMemory(this.c, this.vms, options.memoryBytes ?? DEFAULT_PLATFORM_MEMORY, this.waiting);
    this.lengthWord = this.c.malloc(4);
    this.countWord = this.c.malloc(4);
    this.trampoline = module.addFunction((state: LuaState) => this.callLeaf(state), 'ii');
    this.allocator = module.addFunction(
      (ud: number, pointer: number, oldSize: number, newSize: number) => this.memory.allocate(ud, pointer, oldSize, newSize),
      'iiiii',
    );
    this.hook = module.addFunction((state: LuaState) => this.countHook(state), 'vii');
    this.protectedCalls = new ProtectedCalls(module, this);
    const c = this.c;
    this.heap = {
      bytes: () => c.heap,
      malloc: (size) => c.malloc(size),
      realloc: (pointer, size) => c.realloc(pointer, size),
      free: (pointer) => c.free(pointer),
    };
    this.nativeHost = {
      c: c.natives,
      heap: () => c.heap,
      lengthWord: this.lengthWord,
      name: (text) => c.name(text),
      scratchBuffer: (size) => this.scratchBuffer(size),
      pushNative: (native, vmId, index, extra) => {
        const state = native as LuaState;
        c.pushinteger(state, BigInt(vmId));
        c.pushinteger(state, BigInt(index));
        // The trampoline finds its VM and leaf in upvalues 1 and 2: below the native's own.
        c.natives.lua_rotate(state, -2 - extra, 2);
        c.pushcclosure(state, this.trampoline, 2 + extra);
      },
      raiseStop: (state) => this.raiseStop(state as LuaState),
      callC: (pointer, state) => {
        const fn = table?.get(pointer) as ((state: LuaState) => number) | null | undefined;
        if (fn) return fn(state as LuaState);
        // Without the function table: through lua_call, below the arguments.
        const top = c.natives.lua_gettop(state) as number;
        c.natives.lua_pushvalue(state, upvalue(3));
        c.natives.lua_rotate(state, 1, 1);
        c.natives.lua_callk(state, top, -1, 0, 0);
        return c.natives.lua_gettop(state) as number;
      },
    };
  }

  /** Pushes a native's closure with the `extra` upvalues already on the stack. */
  pushNative(state: number, vmId: number, index: number, extra: number): void {
    this.nativeHost.pushNative(state, vmId, index, extra);
  }

  /** Raises the runtime's stop value in `state`, and at every later instruction of it. */
  private raiseStop(state: LuaState): never {
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
      return new LuaPlatform(await factory.getLuaModule(), luaExports(wasmExports), options);
    }
    const made = await captureExports(factory);
    return new LuaPlatform(made.lua, made.exports, options);
  }

  /** A buffer of at least `size` bytes for text on its way into Lua (copied there at once); 0 when the heap has no room. */
  scratchBuffer(size: number): number {
    if (size > this.scratchSize) {
      if (this.scratch !== 0) this.c.free(this.scratch);
      this.scratchSize = Math.max(size, 256, this.scratchSize * 2);
      this.scratch = this.c.malloc(this.scratchSize);
      if (this.scratch === 0) this.scratchSize = 0;
    }
    return this.scratch;
  }

  /**
   * Gives back a scratch buffer a long text grew past SCRATCH_KEPT: kept, it would hold
   * three times the longest text the isolate ever took in, outside every VM's count.
   */
  trimScratch(): void {
    if (this.scratchSize <= SCRATCH_KEPT) return;
    this.c.free(this.scratch);
    this.scratch = 0;
    this.scratchSize = 0;
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
    this.memory.charge(vm, region.footprint);
    const saved = region.restore(template);
    if (saved !== undefined) {
      vm.attach(saved as LuaState);
      return vm;
    }
    region.reset();
    try {
      // Every allocation, the build's too, goes through the region.
      const state = this.c.newstate(this.allocator, region.id);
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

  private setUp(state: LuaState, id: number): void {
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
      const block = this.c.malloc(this.regionBytes + 15);
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
      return vm === undefined || this.memory.charge(vm, bytes);
    };
    return region;
  }

  /**
   * Opens the standard libraries the sandbox hands out (and debug, which the runtime keeps to
   * itself). io, os and package are never reachable from a section, and opening them is a
   * third of a new state's cost.
   */
  private openLibraries(state: LuaState): void {
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
    this.memory.uncharge(vm, bytes);
  }

  /** Bytes all template VMs hold now (their footprints). */
  get memoryHeld(): number {
    return this.memory.held;
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

  /**
   * Marks the run whose VMs carry `owner` as only waiting: when the memory is full its VMs
   * may be closed, and `reclaimed` told (inside another VM's allocation: it may only let go
   * of things). The host calls it only while no effect of the run is half done, and the run
   * resumes by replay of its journal.
   */
  markWaiting(owner: object, reclaimed: () => void): void {
    this.waiting.wait(owner, reclaimed);
  }

  /** Marks `owner`'s run as running again, or ended: its VMs are its own. */
  markRunning(owner: object): void {
    this.waiting.run(owner);
  }

  /** How many waiting runs have had their VMs taken back for other runs. */
  get reclaimedRuns(): number {
    return this.waiting.reclaimedCount;
  }

  /** How many VMs are open. */
  get openVms(): number {
    return this.vms.size;
  }

  /** Bytecode of a runtime chunk, compiled on first use (runtime-bytecode.ts). */
  bytecode(chunk: RuntimeChunk): { pointer: number; size: number } {
    return this.runtime.bytecode(chunk);
  }

  private callLeaf(state: LuaState): number {
    const c = this.c;
    // Read as doubles: small integers, and no BigInt made on every leaf call.
    const vm = this.vms.get(c.tonumberx(state, upvalue(1), 0));
    const leaf = c.tonumberx(state, upvalue(2), 0);
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
      const thread = c.tothread(state, 1);
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
      pushScalar(this, state, `internal error in the Engine: ${leafFailure(error)}`);
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
    let longest = 0;
    for (const value of values) if (typeof value === 'string' && value.length > longest) longest = value.length;
    if (longest * 3 + 1 > this.scratchSize) {
      // Pushed inside Lua (the thread's resume catches a memory error), but a text longer than
      // the VM may hold ends the run before the heap is asked for three times its length.
      if (vm?.refuseOversized(values) !== undefined) this.raiseStop(state);
      if (!reserveScratch(this, values)) {
        pushScalar(this, state, 'not enough memory');
        return c.error(state);
      }
    }
    for (const value of values) pushScalar(this, state, value);
    if (longest * 3 + 1 > SCRATCH_KEPT) this.trimScratch();
    return values.length;
  }

  private countHook(state: LuaState): void {
    const c = this.c;
    c.getglobal(state, c.name('__rv_vm'));
    const vm = this.vms.get(Number(c.tointegerx(state, -1, 0)));
    c.settop(state, -2);
    if (vm && this.memory.overflowing(state)) {
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
  private pauseIfDue(vm: LuaVm, state: LuaState): void {
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
      this.lauxlibFunctions = { allocator: this.c.getallocf(state, 0), panic: this.c.atpanic(state, 0) };
      this.c.close(state);
    }
    return this.lauxlibFunctions;
  }
  private lauxlibFunctions: { allocator: number; panic: number } | undefined;
}
