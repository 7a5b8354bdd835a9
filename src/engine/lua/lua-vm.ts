/**
 * A LuaVm is one lua_State of a platform (platform.ts): the leaves it binds, the globals the
 * Engine sets in it, the chunks it runs, and the counts its hook and allocator keep. A
 * LuaThread is one of its coroutines, which the Engine resumes by hand.
 */
import type { LuaState } from './c-api.ts';
import { LUA_MASKCOUNT, LUA_OK, LUA_TFUNCTION, LUA_YIELD } from './lua-constants.ts';
import { LARGEST_EXTENSION, type MemoryRegion } from './memory-region.ts';
import { NATIVE_INDEX, type PatternNative } from './pattern-natives.ts';
import type { LuaPlatform } from './platform.ts';
import type { RunMemory } from './run-memory.ts';
import { LUA_ERRMEM } from './protected-call.ts';
import { ensureStack, pushScalar, readScalar, readValues, reserveScratch, type LuaScalar } from './values.ts';
import { vmLimitMessage } from './vm-memory.ts';

/** A JS function exposed to Lua: takes scalars, returns a scalar or a list of them. */
export type LuaLeaf = (...args: LuaScalar[]) => LuaScalar | LuaScalar[] | void;

/**
 * What a VM's leaves are bound to: one object whose methods are the leaves (called with it as
 * `this`), and which decides the count hook's verdict and how a stack overflow ends the run.
 * An object with methods rather than closures: an entry binds one object, not a closure per leaf.
 */
export interface LeafReceiver {
  countHook(count: number): HookVerdict;
  overflow(message: string): void;
}

/** The outcome of one resume of a thread. */
export type ResumeResult = { status: 'yield'; values: LuaScalar[] } | { status: 'return'; values: LuaScalar[] } | { status: 'error'; message: string };

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

/** The most text (UTF-8 bytes, as three a UTF-16 unit) one push may carry without a protected call (LuaVm.pushesDirectly). */
const DIRECT_TEXT_BYTES = 64 * 1024;

/** Instructions between two calls of a VM's count hook. */
export const HOOK_EVERY = 10_000;

/**
 * A recipe every VM of a kind starts from. `build` runs on a fresh state, with the standard
 * libraries open, before anything particular to the VM: what it leaves is saved in a memory
 * region (memory-region.ts) and copied back for later VMs, so it must not depend on the VM
 * it runs in, and leaves it defines are bound afterwards (LuaVm.bind). A VM made from a template
 * lives in its own region or, when every region is taken, is built afresh; either way its
 * Lua code sees the same state, and ending it runs no more Lua (no finalizers).
 */
export interface VmTemplate {
  /** The runtime modules the VM's module loader serves (LuaVm.setModuleLoader). */
  readonly modules: Record<string, RuntimeChunk>;
  build(vm: LuaVm): void;
}

/** The leaf index that makes the trampoline push a fresh userdata instead of calling JS. */
export const USERDATA_LEAF = -1;
/** The leaf index that makes the trampoline load a named runtime module as a function. */
export const MODULE_LEAF = -2;
/** The leaf index that makes the trampoline put the count hook on the thread it is given. */
export const WATCH_LEAF = -3;
/** Leaf indices at or below this one are the pattern natives (pattern-natives.ts). */
export const FIRST_NATIVE = -10;

/** A VM's receiver before its leaves are bound: the count hook lets it run, an overflow is only raised. */
const IDLE_RECEIVER: LeafReceiver = { countHook: () => 'go', overflow: () => {} };

/** One Lua state. Close it when the section entry ends. */
export class LuaVm {
  /** The lua_State; 0 before attach and once closed. */
  private state = 0 as LuaState;
  private leaves: readonly LuaLeaf[] = [];
  private receiver: LeafReceiver = IDLE_RECEIVER;
  /** Bytes the Lua heap holds (tracked when the VM has a memory limit). */
  heapBytes = 0;
  /** True once the VM's allocations count against its memory limit (limitMemory). */
  counting = false;
  /** Whoever the VM works for (VmOptions.owner). */
  owner: object | undefined;
  /** The run's share of Lua memory the VM is charged to (VmOptions.memory). */
  memory: RunMemory | undefined;
  /** The VM's threads whose stacks may grow (its main state, the entry's thread, watched coroutines). */
  readonly threads = new Set<LuaState>();
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
  private readonly entryThreads: LuaState[] = [];

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
  attach(state: LuaState): void {
    this.state = state;
    this.threads.add(state);
  }

  /** Reports a stack overflow (the platform calls this, then stops the thread). */
  overflow(message: string): void {
    this.receiver.overflow(message);
  }

  /** The count hook's verdict (the platform calls this). */
  countHook(count: number): HookVerdict {
    return this.halting ? 'stop' : this.receiver.countHook(count);
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
    return leaf.apply(this.receiver, args);
  }

  /** Sets a global to a Lua function that calls the method bind gives `index`. */
  defineLeaf(name: string, index: number): void {
    this.pushClosure(index);
    this.platform.c.setglobal(this.state, this.platform.c.name(name));
  }

  /** Binds the VM's leaves: `methods[index]` is what the leaf defined with `index` calls, with `receiver` as `this`. */
  bind(receiver: LeafReceiver, methods: readonly LuaLeaf[]): void {
    this.receiver = receiver;
    this.leaves = methods;
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
    const refusal = this.pushValues(state, args);
    if (refusal !== undefined) {
      c.settop(state, base);
      throw new Error(`running ${chunk.name}: ${refusal}`);
    }
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

  /**
   * A new coroutine that will call the global function `name` when first resumed. Made under
   * a protected call (protected-call.ts): the VM's memory is limited by now, and a thread is an
   * allocation. When there is no memory for it, the thread's first resume answers the error.
   */
  newThread(functionName: string): LuaThread {
    const c = this.platform.c;
    let thread = 0 as LuaState;
    let found = false;
    // lua_newthread leaves the thread on the main stack, which keeps it from being collected.
    const made = this.platform.protectedCalls.run(this.state, (state) => {
      thread = c.newthread(state);
      found = c.getglobal(thread, c.name(functionName)) === LUA_TFUNCTION;
      return 1;
    });
    if (!made.ok) return new LuaThread(this.platform, thread, this, this.memoryRefusal(made));
    if (!found) throw new Error(`no Lua function named ${functionName}`);
    this.threads.add(thread);
    this.entryThreads.push(thread);
    return new LuaThread(this.platform, thread, this);
  }

  /**
   * Pushes values from outside onto `target`, one of the VM's threads or its main state, which
   * has room for them (ensureStack): strings under a protected call (protected-call.ts). Answers
   * the error when they do not fit the VM's memory, the run ended with `Limit` when a cap refused.
   */
  pushValues(target: LuaState, values: readonly LuaScalar[]): string | undefined {
    let units = 0;
    for (const value of values) if (typeof value === 'string') units += value.length;
    if (units > DIRECT_TEXT_BYTES / 3) {
      const refusal = this.refuseOversized(values);
      if (refusal !== undefined) return refusal;
    }
    if (this.pushesDirectly(units, values.length)) {
      if (!reserveScratch(this.platform, values)) return this.memoryRefusal({ status: LUA_ERRMEM, message: 'not enough memory' });
      for (const value of values) pushScalar(this.platform, target, value);
      return undefined;
    }
    const made = this.platform.protectedCalls.push(this.state, target, values);
    this.platform.trimScratch();
    return made.ok ? undefined : this.memoryRefusal(made);
  }

  /**
   * True when values whose texts hold `units` UTF-16 units cannot meet a refusal, and go onto the stack without the protected
   * call's cost (a model round's answer is resumed with a few short texts; W1 and W2 took
   * 4-7% longer when each went through lua_pcall). Nil, booleans and numbers live in their
   * stack slot and allocate nothing. A short text (DIRECT_TEXT_BYTES in all) allocates one
   * block of its size; through a region, a new extension chunk besides (LARGEST_EXTENSION at
   * most); the string table's growth is let fail by Lua itself; a GC step's finalizers run
   * under Lua's own protected call. So when every cap has room for two extension chunks and
   * the texts, no allocation of the push can be refused. Anything else goes through
   * protectedCalls.
   */
  private pushesDirectly(units: number, count: number): boolean {
    if (units === 0 || !this.counting) return true;
    const bytes = units * 3;
    if (bytes > DIRECT_TEXT_BYTES) return false;
    const needed = bytes + count * 32 + 2 * LARGEST_EXTENSION;
    const memoryLimit = this.memoryLimit;
    const held = (this.region ? this.region.footprint : this.heapBytes) - this.stackBytes;
    if (memoryLimit !== undefined && held + needed > memoryLimit) return false;
    if (this.memory && this.memory.used + needed > this.memory.limit) return false;
    const platform = this.platform.memory;
    return !this.region || platform.held + needed <= platform.limit;
  }

  /**
   * Ends the run with `Limit` when a text of `values` is longer than the VM may hold (its
   * UTF-8 takes at least a byte a UTF-16 unit), before any of it is copied into the wasm heap;
   * answers the Limit message then.
   */
  refuseOversized(values: readonly LuaScalar[]): string | undefined {
    const limit = this.memoryLimit;
    // Before the limits hold (the Engine's set-up: args, the catalog) nothing is refused; limitMemory checks what it left.
    if (limit === undefined || !this.counting) return undefined;
    for (const value of values) {
      if (typeof value !== 'string' || value.length <= limit) continue;
      const message = vmLimitMessage(limit);
      this.exceedMemory(message);
      return message;
    }
    return undefined;
  }

  /** The error of a protected call that failed: a memory error settles the refusal that caused it, as `Limit`. */
  private memoryRefusal(failed: { status: number; message: string }): string {
    if (failed.status === LUA_ERRMEM && !this.settleMemory() && this.memoryLimit !== undefined && !this.halting) {
      // No cap refused: the wasm heap itself is full. The run ends all the same, as Limit.
      this.exceedMemory("the Lua runtime ran out of memory (the server's wasm heap is full)");
    }
    return failed.message;
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
    this.platform.memory.check(this);
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
    this.state = 0 as LuaState;
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
    private readonly state: LuaState,
    private readonly vm: LuaVm,
    /** Why the thread could not be made (no memory): every resume answers it as an error. */
    private readonly refusal?: string,
  ) {}

  /** Resumes the coroutine with the given values (the first resume passes the function's arguments). */
  resume(args: LuaScalar[]): ResumeResult {
    // A closed VM's memory may already hold another VM.
    if (this.vm.isClosed) throw new Error('a Lua thread was resumed after its VM was closed');
    if (this.refusal !== undefined) return { status: 'error', message: this.refusal };
    const platform = this.platform;
    const c = platform.c;
    const state = this.state;
    if (!c.checkstack(state, args.length)) return { status: 'error', message: `${args.length} values do not fit a Lua stack` };
    const refusal = this.vm.pushValues(state, args);
    if (refusal !== undefined) return { status: 'error', message: refusal };
    const result = c.resume(state, 0, args.length, platform.countWord);
    const count = c.words[platform.countWord >> 2]!;
    const top = c.gettop(state);
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
