/**
 * A stretch of the wasm heap that holds one section VM at a time, with the VM's allocator
 * and a saved image of the VM as its template left it.
 *
 * Every section VM is set up the same way (the runtime loaded and its generic part run, the
 * Engine's modules loaded), and for a short entry that set-up, with the `lua_close` at its
 * end, is most of what the entry costs. So the first VM built in a region is saved: the
 * region's bytes and its allocator's state. Every later VM of the same template starts by
 * copying them back: the same lua_State at the same addresses, exactly as the build left it,
 * sharing nothing with the VM before it. Ending a VM is forgetting it.
 *
 * Lua hands its allocator the old size of every block (lua_Alloc), so the region keeps no
 * headers: blocks are carved from the region by size class and freed blocks wait on their
 * class's list. A block that does not fit spills to the heap's own malloc and is freed when
 * the VM ends; a region of no bytes spills everything, which is how a VM is made when every
 * region is taken.
 */

/** What a region needs of the wasm heap. */
export interface WasmHeap {
  /** The heap's bytes (a fresh view: the memory may have grown). */
  bytes(): Uint8Array;
  malloc(size: number): number;
  realloc(pointer: number, size: number): number;
  free(pointer: number): void;
}

/** A region's contents and allocator state, saved once a template's build is done. */
interface RegionImage {
  readonly template: object;
  readonly state: number;
  readonly bytes: Uint8Array;
  readonly top: number;
  readonly free: readonly (readonly number[] | undefined)[];
}

/** Blocks above this size spill: a few big strings would otherwise use up the region. */
const LARGEST_REGION_BLOCK = 64 * 1024;

export class MemoryRegion {
  /** The first byte never handed out since the region was last reset or restored. */
  private top: number;
  /** Freed blocks by size class. */
  private free: (number[] | undefined)[] = [];
  /** Blocks of the current VM that live in malloc's heap, not the region. */
  private readonly spilled = new Set<number>();
  private image: RegionImage | undefined;
  /** True while a VM lives in the region. */
  busy = false;

  constructor(
    /** The id of every VM the region holds: the VM's Lua closures and allocator carry it. */
    readonly id: number,
    private readonly start: number,
    private readonly end: number,
    private readonly heap: WasmHeap,
  ) {
    this.top = start;
  }

  /** True when the region has an image of `template` saved. */
  holds(template: object): boolean {
    return this.image?.template === template;
  }

  /** The lua_State saved for `template`, restored and ready; undefined when none is saved. */
  restore(template: object): number | undefined {
    const image = this.image;
    if (!image || image.template !== template) return undefined;
    this.heap.bytes().set(image.bytes, this.start);
    this.top = image.top;
    this.free = image.free.map((list) => list?.slice());
    return image.state;
  }

  /** Empties the region for a VM built from scratch (the saved image goes). */
  reset(): void {
    this.image = undefined;
    this.top = this.start;
    this.free = [];
  }

  /**
   * Saves the region as `template`'s image, with `state` its lua_State. Not when a block
   * spilled: the image would point at memory the region does not own.
   */
  save(template: object, state: number): void {
    if (this.spilled.size > 0 || this.end === this.start) return;
    this.image = {
      template,
      state,
      bytes: this.heap.bytes().slice(this.start, this.top),
      top: this.top,
      free: this.free.map((list) => list?.slice()),
    };
  }

  /** Ends the VM the region holds: its spilled blocks are freed, the rest is forgotten. */
  vacate(): void {
    for (const pointer of this.spilled) this.heap.free(pointer);
    this.spilled.clear();
    this.busy = false;
  }

  /** lua_Alloc's realloc for a live block (`pointer` 0: a new one); 0 when there is no room. */
  realloc(pointer: number, oldSize: number, newSize: number): number {
    if (pointer === 0) return this.allocate(newSize);
    if (!this.owns(pointer)) {
      const moved = this.heap.realloc(pointer, newSize);
      if (moved !== 0 && moved !== pointer) {
        this.spilled.delete(pointer);
        this.spilled.add(moved);
      }
      return moved;
    }
    const sizeClass = classOf(oldSize);
    if (classOf(newSize) === sizeClass) return pointer;
    const moved = this.allocate(newSize);
    // Lua counts on a shrink never failing: the block it has is big enough.
    if (moved === 0) return newSize <= oldSize ? pointer : 0;
    this.heap.bytes().copyWithin(moved, pointer, pointer + Math.min(oldSize, newSize));
    (this.free[sizeClass] ??= []).push(pointer);
    return moved;
  }

  /** lua_Alloc's free. */
  release(pointer: number, size: number): void {
    if (this.owns(pointer)) {
      (this.free[classOf(size)] ??= []).push(pointer);
      return;
    }
    this.heap.free(pointer);
    this.spilled.delete(pointer);
  }

  private allocate(size: number): number {
    if (size <= LARGEST_REGION_BLOCK) {
      const sizeClass = classOf(size);
      const reused = this.free[sizeClass]?.pop();
      if (reused !== undefined) return reused;
      const capacity = capacityOf(sizeClass);
      if (this.top + capacity <= this.end) {
        const pointer = this.top;
        this.top += capacity;
        return pointer;
      }
    }
    const pointer = this.heap.malloc(size);
    if (pointer !== 0) this.spilled.add(pointer);
    return pointer;
  }

  private owns(pointer: number): boolean {
    return pointer >= this.start && pointer < this.end;
  }
}

/**
 * The size class of a block of `size` bytes: multiples of 16 up to 1 KiB, then eight classes
 * per doubling (at most an eighth of a block wasted).
 */
export function classOf(size: number): number {
  if (size <= 1024) return (size + 15) >> 4;
  const exponent = 31 - Math.clz32(size - 1);
  const step = 1 << (exponent - 3);
  return 56 + (exponent - 10) * 8 + Math.ceil(size / step);
}

/** The bytes every block of a size class holds. */
export function capacityOf(sizeClass: number): number {
  if (sizeClass <= 64) return sizeClass << 4;
  const index = sizeClass - 65;
  const exponent = 10 + (index >> 3);
  return ((index & 7) + 9) << (exponent - 3);
}
