/**
 * What Lua's memory may hold, and the allocator that holds it to that. Three caps: a VM's
 * own (VmOptions.memoryLimit), its run's (run-memory.ts) and the platform's (all template
 * VMs of the isolate). A cap refuses an allocation as Lua's allocator would fail it; Lua
 * answers most refusals with a full collection and the same request again, so a refusal
 * ends the run with `Limit` only once it holds (settleRefusal). A thread's growing stack
 * passes the VM's cap (the count hook bounds stacks at STACK_SLOTS instead), never its run's.
 * When the platform's memory is full, the VMs of runs that only wait go first (makeRoom).
 */
import type { CApi, LuaState, Pointer } from './c-api.ts';
import type { LuaVm } from './lua-vm.ts';
import { formatBytes, type RunMemory } from './run-memory.ts';
import type { WaitingRuns } from './waiting-runs.ts';

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

/** The Limit message of a VM past its memory cap. */
export function vmLimitMessage(limit: number): string {
  return `a Lua VM of the run held more than its memory limit of ${formatBytes(limit)} (memoryBytes)`;
}

/** The memory of one platform's VMs: what they hold, what they may, and the allocator. */
export class VmMemory {
  /** Bytes all template VMs hold. */
  private used = 0;
  /** True when lua_State's stack fields sit where STACK_OFFSET says (the stack bound needs them). */
  readonly stackReadable: boolean;
  /** The request lua_Alloc is answering right now (to tell a thread's stack growing). */
  private allocating: Pointer = 0;
  private allocatingOld = 0;
  private allocatingNew = 0;
  /** Why the allocation under way was refused, when a cap refused it. */
  private refusal: string | undefined;

  constructor(
    private readonly c: CApi,
    /** The platform's open VMs by id (a lua_Alloc's ud). */
    private readonly vms: ReadonlyMap<number, LuaVm>,
    /** Bytes all template VMs together may hold (PlatformOptions.memoryBytes). */
    readonly limit: number,
    /** The runs that only wait: their VMs are the first to go when the memory is full. */
    private readonly waiting: WaitingRuns,
  ) {
    this.stackReadable = this.checkStackFields();
  }

  /** Bytes all template VMs hold now (their footprints). */
  get held(): number {
    return this.used;
  }

  /** Gives back what a closing VM's region held of the platform's memory and its run's. */
  uncharge(vm: LuaVm, bytes: number): void {
    this.used -= bytes;
    if (vm.memory) vm.memory.used -= bytes;
  }

  /** True when a thread's stack holds more than STACK_SLOTS (when the stack fields are readable). */
  overflowing(state: LuaState): boolean {
    return this.stackReadable && this.stackBytes(state) > STACK_SLOTS * 16;
  }

  /** True when a fresh state's stack fields read as Lua 5.4.6 lays them out, and follow a growth. */
  private checkStackFields(): boolean {
    const state = this.c.newstateL();
    try {
      if (this.stackBytes(state) !== FRESH_STACK_BYTES) return false;
      this.c.checkstack(state, 1000);
      return this.stackBytes(state) >= 1000 * 16;
    } finally {
      this.c.close(state);
    }
  }

  private stackBytes(state: LuaState): number {
    const words = this.c.words;
    return words[(state + STACK_LAST_OFFSET) >> 2]! - words[(state + STACK_OFFSET) >> 2]!;
  }

  /** The lua_Alloc of template VMs, and of plain VMs once their memory is limited: ud is the VM id. */
  allocate(ud: number, pointer: number, oldSize: number, newSize: number): number {
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
    const words = this.c.words;
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
  charge(vm: LuaVm, bytes: number): boolean {
    if (bytes > 0 && vm.counting) {
      const refusal = this.chargeRefusal(vm, bytes);
      if (refusal !== undefined) {
        this.refusal = refusal;
        return false;
      }
    }
    this.used += bytes;
    if (vm.memory) vm.memory.used += bytes;
    return true;
  }

  /** Ends the VM's run as Limit when what the VM holds already passes a cap (checked once its set-up is done). */
  check(vm: LuaVm): void {
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
    if (this.used + bytes > this.limit && !this.makeRoom(vm, bytes)) {
      return `the server's Lua memory of ${formatBytes(this.limit)} is full, and this run holds the most of it`;
    }
    return undefined;
  }

  /**
   * Frees the platform's memory for `bytes` more. First it closes the VMs of runs that only
   * wait, the one waiting longest first (waiting-runs.ts): they lose nothing but the VMs, and
   * resume by replay once answered. Only when no waiting run holds anything does it end, with
   * `Limit`, the runs that hold the most, one by one, while one of them holds more than the
   * asking VM's run. The VMs close where they stand (none of them is running: only the asking
   * VM is).
   */
  private makeRoom(vm: LuaVm, bytes: number): boolean {
    for (const run of this.waiting.oldestFirst()) {
      if (this.used + bytes <= this.limit) return true;
      if (run.owner === vm.owner) continue;
      const held = [...this.vms.values()].filter((other) => other.owner === run.owner);
      if (held.length === 0) continue;
      for (const other of held) other.close();
      this.waiting.reclaim(run);
    }
    while (this.used + bytes > this.limit) {
      let largest: RunMemory | undefined;
      for (const other of this.vms.values()) {
        const memory = other.memory;
        if (memory && memory !== vm.memory && (largest === undefined || memory.used > largest.used)) largest = memory;
      }
      if (!largest || largest.used <= (vm.memory?.used ?? 0)) return false;
      largest.exceed(`the server's Lua memory of ${formatBytes(this.limit)} was full, and this run held the most of it (${formatBytes(largest.used)})`);
      for (const other of [...this.vms.values()]) if (other.memory === largest) other.close();
    }
    return true;
  }
}
