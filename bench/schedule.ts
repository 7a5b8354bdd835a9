/**
 * How the peers' workloads are sampled: as the peer each figure is put beside samples them
 * (untimed runs, then 5 batches): W1 and W2 as the AI SDK's script does (ai-sdk.mjs), W3 as
 * LangGraph's does (langgraph.mjs; N = 1,000, which it does not run, as its N = 100 is scaled).
 * A shorter warm-up times Runvil while V8 is still tiering its wasm and JS up (W1's median
 * falls for its first 3,000 runs or so), which the peer's figure does not include, and a
 * longer one times what the peer's does not.
 */
export const PEER_SCHEDULE = {
  W1: { warmup: 2000, samples: 10_000 },
  W2: { warmup: 300, samples: 2000 },
  'W3 N=0': { warmup: 50, samples: 500 },
  'W3 N=10': { warmup: 20, samples: 200 },
  'W3 N=100': { warmup: 4, samples: 40 },
  'W3 N=1000': { warmup: 3, samples: 10 },
} as const;
