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
 * headers: blocks are carved by size class and freed blocks wait on their class's list. A VM
 * that outgrows its region carves on from extension chunks it takes from the heap's own
 * malloc, doubling in size; a block over 64 KiB comes from malloc on its own. Both are freed
 * when the VM ends, a few calls in all. A region of no bytes starts in an extension chunk,
 * which is how a VM is made when every region is taken.
 *
 * Freed blocks never coalesce, so a VM that frees blocks of one class and asks for another
 * would carve on forever while its live heap stays small. Once a quarter of what the VM
 * carved waits on free lists, it takes no more chunks: blocks that find no room come from
 * malloc one by one, which merges what is freed. And what the VM holds of the heap (the
 * region, its chunks, its blocks from malloc: its footprint) is charged, before it grows,
 * to whoever the region works for (`charge`), who may refuse.
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
  readonly freeBytes: number;
}

/** Blocks above this size come from malloc one by one: big strings, big arrays. */
const LARGEST_CARVED_BLOCK = 64 * 1024;
/** The first extension chunk a VM takes; each next one is twice the last, up to the most. */
const FIRST_EXTENSION = 256 * 1024;
export const LARGEST_EXTENSION = 4 * 1024 * 1024;

export class MemoryRegion {
  /** Where the next block is carved, and the end of the chunk it is carved from. */
  private top: number;
  private limit: number;
  /** Freed blocks by size class. */
  private free: (number[] | undefined)[] = [];
  /** The extension chunks of the current VM: malloc's pointer, then the chunk's 16-aligned start and end. */
  private readonly extensions: number[] = [];
  private nextExtension = FIRST_EXTENSION;
  /** Blocks of the current VM from malloc one by one (large ones, and those carving found no room for), with their sizes. */
  private readonly large = new Map<number, number>();
  /** Bytes carved so far (region and chunks), bytes waiting on free lists, bytes taken from malloc. */
  private carvedBytes = 0;
  private freeBytes = 0;
  private mallocBytes = 0;
  /**
   * Asked before the VM takes `bytes` more of the heap (told of a negative amount when it
   * gives them back): false refuses, and the allocation fails. Set once, by whoever owns the
   * region, for every VM it will hold.
   */
  charge: (bytes: number) => boolean = () => true;
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
    this.limit = end;
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
    this.rewind(
      image.top,
      image.free.map((list) => list?.slice()),
      image.freeBytes,
    );
    return image.state;
  }

  /** Empties the region for a VM built from scratch (the saved image goes). */
  reset(): void {
    this.image = undefined;
    this.rewind(this.start, [], 0);
  }

  private rewind(top: number, free: (number[] | undefined)[], freeBytes: number): void {
    this.top = top;
    this.limit = this.end;
    this.free = free;
    this.carvedBytes = top - this.start;
    this.freeBytes = freeBytes;
  }

  /** Bytes of the heap the current VM holds: the region, its extension chunks, its blocks from malloc. */
  get footprint(): number {
    return this.capacity + this.extensionBytes + this.mallocBytes;
  }
  private extensionBytes = 0;

  /** Bytes of the region itself. */
  get capacity(): number {
    return this.end - this.start;
  }

  /**
   * Saves the region as `template`'s image, with `state` its lua_State. Not when the VM has
   * memory outside the region: the image would point at memory the region does not own.
   */
  save(template: object, state: number): void {
    if (this.extensions.length > 0 || this.large.size > 0 || this.end === this.start) return;
    this.image = {
      template,
      state,
      bytes: this.heap.bytes().slice(this.start, this.top),
      top: this.top,
      free: this.free.map((list) => list?.slice()),
      freeBytes: this.freeBytes,
    };
  }

  /** Ends the VM the region holds: its extension chunks and large blocks are freed, the rest is forgotten. */
  vacate(): void {
    for (let i = 0; i < this.extensions.length; i += 3) this.heap.free(this.extensions[i]!);
    this.extensions.length = 0;
    this.nextExtension = FIRST_EXTENSION;
    for (const pointer of this.large.keys()) this.heap.free(pointer);
    this.large.clear();
    const given = this.extensionBytes + this.mallocBytes;
    this.extensionBytes = 0;
    this.mallocBytes = 0;
    if (given > 0) this.charge(-given);
    this.busy = false;
  }

  /** lua_Alloc's realloc for a live block (`pointer` 0: a new one); 0 when there is no room. */
  realloc(pointer: number, oldSize: number, newSize: number): number {
    if (pointer === 0) return this.allocate(newSize);
    if (!this.carved(pointer)) {
      if (newSize > LARGEST_CARVED_BLOCK) {
        const had = this.large.get(pointer) ?? oldSize;
        if (newSize > had && !this.charge(newSize - had)) return 0;
        const moved = this.heap.realloc(pointer, newSize);
        if (moved === 0) {
          if (newSize > had) this.charge(had - newSize);
          return 0;
        }
        if (newSize < had) this.charge(newSize - had);
        this.mallocBytes += newSize - had;
        this.large.delete(pointer);
        this.large.set(moved, newSize);
        return moved;
      }
      // Small enough now to be carved; if there is no room the large block will do.
      const moved = this.allocate(newSize);
      if (moved === 0) return pointer;
      this.heap.bytes().copyWithin(moved, pointer, pointer + newSize);
      this.release(pointer, oldSize);
      return moved;
    }
    const sizeClass = classOf(oldSize);
    if (newSize <= LARGEST_CARVED_BLOCK && classOf(newSize) === sizeClass) return pointer;
    const moved = this.allocate(newSize);
    // Lua counts on a shrink never failing: the block it has is big enough.
    if (moved === 0) return newSize <= oldSize ? pointer : 0;
    this.heap.bytes().copyWithin(moved, pointer, pointer + Math.min(oldSize, newSize));
    (this.free[sizeClass] ??= []).push(pointer);
    this.freeBytes += capacityOf(sizeClass);
    return moved;
  }

  /** lua_Alloc's free. */
  release(pointer: number, size: number): void {
    if (this.carved(pointer)) {
      const sizeClass = classOf(size);
      (this.free[sizeClass] ??= []).push(pointer);
      this.freeBytes += capacityOf(sizeClass);
      return;
    }
    this.heap.free(pointer);
    const had = this.large.get(pointer);
    if (had === undefined) return;
    this.large.delete(pointer);
    this.mallocBytes -= had;
    this.charge(-had);
  }

  private allocate(size: number): number {
    if (size > LARGEST_CARVED_BLOCK) return this.allocateAlone(size);
    const sizeClass = classOf(size);
    const capacity = capacityOf(sizeClass);
    const reused = this.free[sizeClass]?.pop();
    if (reused !== undefined) {
      this.freeBytes -= capacity;
      return reused;
    }
    if (this.top + capacity > this.limit) {
      // Fragmented: what waits on the free lists would be carved past for good.
      if (this.freeBytes * 4 > this.carvedBytes) return this.allocateAlone(size);
      if (!this.extend(capacity)) return 0;
    }
    const pointer = this.top;
    this.top += capacity;
    this.carvedBytes += capacity;
    return pointer;
  }

  /** A block from malloc on its own, charged first. */
  private allocateAlone(size: number): number {
    if (!this.charge(size)) return 0;
    const pointer = this.heap.malloc(size);
    if (pointer === 0) {
      this.charge(-size);
      return 0;
    }
    this.large.set(pointer, size);
    this.mallocBytes += size;
    return pointer;
  }

  /** Carves on from a new extension chunk (what is left of the current one goes unused). */
  private extend(capacity: number): boolean {
    const size = Math.max(this.nextExtension, capacity);
    if (!this.charge(size)) return false;
    const block = this.heap.malloc(size + 15);
    if (block === 0) {
      this.charge(-size);
      return false;
    }
    this.extensionBytes += size;
    const start = (block + 15) & ~15;
    this.extensions.push(block, start, start + size);
    this.nextExtension = Math.min(this.nextExtension * 2, LARGEST_EXTENSION);
    this.top = start;
    this.limit = start + size;
    return true;
  }

  /** True for a block carved from the region or an extension chunk, false for a large one from malloc. */
  private carved(pointer: number): boolean {
    if (pointer >= this.start && pointer < this.end) return true;
    const extensions = this.extensions;
    for (let i = 1; i < extensions.length; i += 3) {
      if (pointer >= extensions[i]! && pointer < extensions[i + 1]!) return true;
    }
    return false;
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
