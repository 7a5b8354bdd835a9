/**
 * What a LuaPlatform (platform.ts) and each of its VMs are made with, and the platform's
 * defaults: how many memory regions, how big each, and how much all VMs may hold.
 */
import type { VmTemplate } from './lua-vm.ts';
import type { RunMemory } from './run-memory.ts';

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

/** How many template VMs may live in regions at once, how big a region is, and how much all VMs may hold. */
export interface PlatformOptions {
  regions?: number;
  regionBytes?: number;
  /**
   * Bytes of the wasm heap all template VMs together may hold (default 1 GiB). When a VM
   * would pass it, the VMs of runs that only wait are closed first (markWaiting); when none
   * holds anything, the run holding the most ends with `Limit` and its VMs are closed at once;
   * a run that holds the most itself is refused.
   */
  memoryBytes?: number;
}

export const DEFAULT_REGIONS = 32;
export const DEFAULT_REGION_BYTES = 512 * 1024;
export const DEFAULT_PLATFORM_MEMORY = 1024 * 1024 * 1024;
