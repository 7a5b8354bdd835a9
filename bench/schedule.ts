/**
 * How W1 and W2 are sampled: as the AI SDK's script samples them (ai-sdk.mjs: untimed
 * operations, then 5 batches), the peer their targets are stated against. A shorter warm-up
 * times Runvil while V8 is still tiering its wasm and JS up (W1's median falls for its first
 * 3,000 runs or so), which the peer's figure never includes.
 */
export const PEER_SCHEDULE = {
  W1: { warmup: 2000, samples: 10_000 },
  W2: { warmup: 300, samples: 2000 },
} as const;
