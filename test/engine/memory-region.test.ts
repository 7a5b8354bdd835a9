/**
 * The memory region a template VM lives in (src/engine/lua/memory-region.ts), over a fake
 * wasm heap: its size classes, its saved image, spilling to malloc and vacating.
 */
import { describe, expect, it } from 'vitest';
import { MemoryRegion, capacityOf, classOf, type WasmHeap } from '../../src/engine/lua/memory-region.ts';

/** A heap of 8 MiB whose malloc hands out blocks from 1 MiB on, and records what is live. */
function fakeHeap(options: { failMalloc?: boolean; mallocs?: number } = {}) {
  let mallocs = options.mallocs ?? Infinity;
  const bytes = new Uint8Array(8 << 20);
  let next = 1 << 20;
  const live = new Map<number, number>();
  const heap: WasmHeap & { live: Map<number, number> } = {
    live,
    bytes: () => bytes,
    malloc(size) {
      if (options.failMalloc || mallocs-- <= 0 || next + size > bytes.length) return 0;
      const pointer = next;
      next += (size + 15) & ~15;
      live.set(pointer, size);
      return pointer;
    },
    realloc(pointer, size) {
      const moved = heap.malloc(size);
      if (moved === 0) return 0;
      bytes.copyWithin(moved, pointer, pointer + Math.min(size, live.get(pointer)!));
      heap.free(pointer);
      return moved;
    },
    free(pointer) {
      if (!live.delete(pointer)) throw new Error(`free of a block malloc never gave: ${pointer}`);
    },
  };
  return heap;
}

const REGION = { start: 4096, end: 4096 + 64 * 1024 };

describe('size classes', () => {
  it('give every size a block at least that big, with little waste', () => {
    let previous = 0;
    for (let size = 1; size <= 300_000; size += size < 4096 ? 1 : 97) {
      const sizeClass = classOf(size);
      expect(sizeClass).toBeGreaterThanOrEqual(previous);
      previous = sizeClass;
      const capacity = capacityOf(sizeClass);
      expect(capacity).toBeGreaterThanOrEqual(size);
      expect(capacity).toBeLessThanOrEqual(Math.max(size + 15, size * 1.125 + 1));
      expect(capacity % 16).toBe(0);
    }
  });
});

describe('a memory region', () => {
  it('hands out blocks inside itself and reuses freed ones of the same class', () => {
    const region = new MemoryRegion(1, REGION.start, REGION.end, fakeHeap());
    const a = region.realloc(0, 0, 40);
    const b = region.realloc(0, 0, 40);
    expect(a).toBeGreaterThanOrEqual(REGION.start);
    expect(b).toBe(a + capacityOf(classOf(40)));
    region.release(a, 40);
    expect(region.realloc(0, 0, 33)).toBe(a);
  });

  it('keeps a block in place while its size stays in its class, and moves it with its bytes otherwise', () => {
    const heap = fakeHeap();
    const region = new MemoryRegion(1, REGION.start, REGION.end, heap);
    const block = region.realloc(0, 0, 20);
    heap.bytes().set([1, 2, 3, 4, 5], block);
    expect(region.realloc(block, 20, 30)).toBe(block);
    const grown = region.realloc(block, 30, 100);
    expect(grown).not.toBe(block);
    expect([...heap.bytes().subarray(grown, grown + 5)]).toEqual([1, 2, 3, 4, 5]);
  });

  it('takes blocks that do not fit from malloc, and frees them when it is vacated', () => {
    const heap = fakeHeap();
    const region = new MemoryRegion(1, REGION.start, REGION.end, heap);
    const big = region.realloc(0, 0, 100_000);
    expect(big).toBeGreaterThanOrEqual(REGION.end);
    const blocks = Array.from({ length: 100 }, () => region.realloc(0, 0, 1000));
    expect(blocks.filter((pointer) => pointer >= REGION.end).length).toBeGreaterThan(0);
    expect(heap.live.size).toBeGreaterThan(1);
    region.vacate();
    expect(heap.live.size).toBe(0);
  });

  it('never fails a shrink, even with no room left anywhere', () => {
    const region = new MemoryRegion(1, REGION.start, REGION.start + 1024, fakeHeap({ failMalloc: true }));
    const block = region.realloc(0, 0, 1024);
    expect(block).toBe(REGION.start);
    expect(region.realloc(0, 0, 16)).toBe(0);
    expect(region.realloc(block, 1024, 16)).toBe(block);
  });

  it('restores its saved bytes and allocator state exactly, and only for the template it saved', () => {
    const heap = fakeHeap();
    const region = new MemoryRegion(1, REGION.start, REGION.end, heap);
    const template = {};
    expect(region.restore(template)).toBeUndefined();
    const kept = region.realloc(0, 0, 64);
    const freed = region.realloc(0, 0, 200);
    heap.bytes().fill(7, kept, kept + 64);
    region.release(freed, 200);
    region.save(template, kept);
    // Every byte handed out before the save (what a restore copies back).
    const used = freed + capacityOf(classOf(200));
    const saved = heap.bytes().slice(REGION.start, used);

    // A VM's life: new blocks, overwritten bytes, a spill.
    const later = [region.realloc(0, 0, 200), region.realloc(0, 0, 500), region.realloc(0, 0, 90_000)];
    heap.bytes().fill(9, REGION.start, REGION.end);
    region.vacate();

    expect(region.restore({})).toBeUndefined();
    expect(region.restore(template)).toBe(kept);
    expect(heap.bytes().slice(REGION.start, used)).toEqual(saved);
    // The same allocations get the same blocks as the first time round.
    expect([region.realloc(0, 0, 200), region.realloc(0, 0, 500)]).toEqual(later.slice(0, 2));
  });

  it('carves on from a few doubling extension chunks once it is full, and frees them when vacated', () => {
    const heap = fakeHeap();
    const region = new MemoryRegion(1, REGION.start, REGION.end, heap);
    const blocks = Array.from({ length: 3000 }, () => region.realloc(0, 0, 500));
    // 3,000 blocks of 512 bytes: the region's 64 KiB, then chunks of 256 KiB, 512 KiB, 1 MiB.
    expect(heap.live.size).toBe(3);
    const sorted = [...blocks].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(512);
    // A block carved from a chunk is freed back to its class, not to malloc.
    region.release(blocks[2999]!, 500);
    expect(region.realloc(0, 0, 500)).toBe(blocks[2999]);
    region.vacate();
    expect(heap.live.size).toBe(0);
  });

  it('moves a large block that shrinks into a carved one, or keeps it when there is no room', () => {
    const heap = fakeHeap();
    const region = new MemoryRegion(1, REGION.start, REGION.end, heap);
    const large = region.realloc(0, 0, 100_000);
    heap.bytes().set([7, 8, 9], large);
    const small = region.realloc(large, 100_000, 100);
    expect(small).toBeLessThan(REGION.end);
    expect([...heap.bytes().subarray(small, small + 3)]).toEqual([7, 8, 9]);
    expect(heap.live.has(large)).toBe(false);

    // No room to carve (malloc gives the large block, then nothing): the shrink keeps it.
    const tight = fakeHeap({ mallocs: 1 });
    const empty = new MemoryRegion(2, 0, 0, tight);
    const kept = empty.realloc(0, 0, 100_000);
    expect(empty.realloc(kept, 100_000, 100)).toBe(kept);
    // Freed as what it is, a block of malloc's.
    empty.release(kept, 100);
    expect(tight.live.size).toBe(0);
  });

  it('saves no image while the VM has memory outside it, and none for a region of no bytes', () => {
    const template = {};
    const large = new MemoryRegion(1, REGION.start, REGION.end, fakeHeap());
    large.realloc(0, 0, 100_000);
    large.save(template, 1);
    expect(large.holds(template)).toBe(false);

    const extended = new MemoryRegion(2, REGION.start, REGION.start + 1024, fakeHeap());
    extended.realloc(0, 0, 2000);
    extended.save(template, 1);
    expect(extended.holds(template)).toBe(false);

    const heap = fakeHeap();
    const empty = new MemoryRegion(3, 0, 0, heap);
    const block = empty.realloc(0, 0, 16);
    expect(heap.live.size).toBe(1);
    expect(block).toBeGreaterThanOrEqual(1 << 20);
    empty.save(template, 1);
    expect(empty.holds(template)).toBe(false);
    empty.vacate();
    expect(heap.live.size).toBe(0);
  });
});

describe('a memory region whose VM cycles through size classes', () => {
  it('takes no more chunks once a quarter of what it carved waits on free lists', () => {
    const heap = fakeHeap();
    const region = new MemoryRegion(1, REGION.start, REGION.end, heap);
    let most = 0;
    for (let size = 32; size <= 2000; size += 64) {
      const blocks = Array.from({ length: 100 }, () => region.realloc(0, 0, size));
      expect(blocks.every((pointer) => pointer !== 0)).toBe(true);
      most = Math.max(most, region.footprint);
      for (const pointer of blocks) region.release(pointer, size);
    }
    // 31 classes of 100 blocks, 3 MB if each class carved its own; at most the largest round (200 KB) and the region instead.
    expect(most).toBeLessThan(512 * 1024);
    expect(region.footprint).toBeLessThan(512 * 1024);
    region.vacate();
    expect(heap.live.size).toBe(0);
  });

  it('hands blocks it took from malloc alone back to malloc when they are freed', () => {
    const heap = fakeHeap();
    const region = new MemoryRegion(1, REGION.start, REGION.start + 4096, heap);
    const first = Array.from({ length: 8 }, () => region.realloc(0, 0, 500));
    for (const pointer of first) region.release(pointer, 500);
    const live = heap.live.size;
    const other = region.realloc(0, 0, 900);
    expect(heap.live.size).toBe(live + 1);
    region.release(other, 900);
    expect(heap.live.size).toBe(live);
  });
});

describe("a memory region's footprint", () => {
  it('counts the region, its chunks and its blocks from malloc, and is charged before it grows', () => {
    const charges: number[] = [];
    const region = new MemoryRegion(1, REGION.start, REGION.end, fakeHeap());
    region.charge = (bytes) => (charges.push(bytes), true);
    expect(region.footprint).toBe(64 * 1024);
    const big = region.realloc(0, 0, 100_000);
    expect(region.footprint).toBe(64 * 1024 + 100_000);
    region.release(big, 100_000);
    expect(region.footprint).toBe(64 * 1024);
    expect(charges).toEqual([100_000, -100_000]);
  });

  it('fails the allocation when the charge is refused, and takes nothing from malloc', () => {
    const heap = fakeHeap();
    const region = new MemoryRegion(1, REGION.start, REGION.start + 1024, heap);
    region.charge = () => false;
    expect(region.realloc(0, 0, 100_000)).toBe(0);
    expect(region.realloc(0, 0, 2000)).toBe(0);
    expect(heap.live.size).toBe(0);
    // Inside the region nothing is charged: it is the VM's already.
    expect(region.realloc(0, 0, 512)).toBe(REGION.start);
  });

  it('gives back everything but the region when vacated', () => {
    const charges: number[] = [];
    const region = new MemoryRegion(1, REGION.start, REGION.start + 1024, fakeHeap());
    region.charge = (bytes) => (charges.push(bytes), true);
    for (let i = 0; i < 100; i++) region.realloc(0, 0, 1000);
    region.realloc(0, 0, 200_000);
    region.vacate();
    expect(charges.reduce((sum, bytes) => sum + bytes, 0)).toBe(0);
    expect(region.footprint).toBe(1024);
  });
});
