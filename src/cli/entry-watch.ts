/**
 * The memory the command's thread and its supervisor share to follow section entries
 * (supervisor.ts): where the entry computing now started and what it computed before, on a
 * clock both threads read alike (milliseconds since the epoch, to the microsecond).
 */

/** Slot 0: when the computing entry's Lua last started (0 while none computes); slot 1: what that entry computed before. */
export const WATCH_SLOTS = 2;

/** The clock both threads read: performance.now() of each thread, made absolute. */
export const sharedNow = (): number => performance.timeOrigin + performance.now();

/** A fresh watch buffer. */
export function newWatch(): Float64Array {
  return new Float64Array(new SharedArrayBuffer(WATCH_SLOTS * Float64Array.BYTES_PER_ELEMENT));
}
