/**
 * Everything random in a run comes from its seed: the untrusted-envelope nonce and each
 * section VM's math.random seed. Same seed, same run.
 */
import { hexOf, sha256 } from '../json/digest.ts';

/** The run's derived randomness. */
export interface RunSeed {
  /** 32 lowercase hex digits naming the untrusted envelope's tags. */
  nonce: string;
  /** Two 32-bit integers for math.randomseed in the VM of entry number `entry`. */
  vmSeed(entry: number): [number, number];
}

const derived = new Map<string, Promise<RunSeed>>();

/**
 * Derives the run's nonce and VM seeds from its seed text. Replays and tests reuse seeds, and
 * WebCrypto's digest waits on a thread pool, so recent derivations are kept.
 */
export function deriveRunSeed(seed: string): Promise<RunSeed> {
  let found = derived.get(seed);
  if (!found) {
    found = derive(seed);
    if (derived.size >= 256) derived.delete(derived.keys().next().value!);
    derived.set(seed, found);
  }
  return found;
}

async function derive(seed: string): Promise<RunSeed> {
  const nonce = hexOf((await sha256(`runvil nonce\0${seed}`)).slice(0, 16));
  const base = await sha256(`runvil random\0${seed}`);
  const view = new DataView(base.buffer);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  return {
    nonce,
    vmSeed: (entry) => [(hi ^ Math.imul(entry + 1, 0x9e3779b1)) >>> 0, (lo + entry) >>> 0],
  };
}
