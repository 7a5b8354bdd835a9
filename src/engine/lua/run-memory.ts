/**
 * The Lua memory one run's VMs hold together. Every VM of the run charges its footprint here
 * (its region, extension chunks and blocks from malloc: what it really holds of the wasm
 * heap, not only Lua's count), so a run with hundreds of live tasks meets its budget before
 * it can take the heap its neighbours need.
 */
import type { StopSwitch } from '../budget.ts';

/** A run's share of the platform's Lua memory. */
export class RunMemory {
  /** Bytes the run's live VMs hold. */
  used = 0;

  constructor(
    /** Bytes the run's VMs may hold together. */
    readonly limit: number,
    private readonly stop: StopSwitch,
  ) {}

  /** Ends the run with `Limit`: a cap was hit, or the platform gave the memory to others. */
  exceed(message: string): void {
    this.stop.exceed(message);
  }
}

/** Bytes as a person reads them: whole MiB or KiB when they are, else bytes. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${(bytes / (1 << 20)).toLocaleString('en-US')} MiB`;
  if (bytes >= 1 << 10 && bytes % (1 << 10) === 0) return `${(bytes / (1 << 10)).toLocaleString('en-US')} KiB`;
  return `${bytes.toLocaleString('en-US')} bytes`;
}
