/**
 * B1 inside a Worker isolate: parse and run the 20-section pure-Lua prompt (workloads.ts) on
 * the isolate's LuaPlatform, against its baseline, 20 bare VMs from the isolate's wasmoon
 * factory (createEngine and close), as bench/run.ts measures B1 in Node. Served by
 * bench/worker-entry.ts (`GET /bench/b1`). workerd's clock moves only across I/O and in
 * whole milliseconds, so each side is timed over many iterations, with a timer before each
 * reading.
 */
import type { LuaFactory } from 'wasmoon';
import type { LuaPlatform } from '../src/engine/lua/vm.ts';
import { parsePrompt } from '../src/prompt/parse.ts';
import { runPrompt } from '../src/engine/run.ts';
import { createHarness, servicesOf } from '../src/host/harness.ts';
import { MemoryRunStore } from '../src/host/run-store.ts';
import { B1_RESULT, B1_SOURCE } from './workloads.ts';

/** One B1 measurement: microseconds per iteration of each side. */
export interface B1Measure {
  iterations: number;
  /** 20 bare wasmoon VMs created and closed. */
  bareUs: number;
  /** The 20-section prompt parsed and run. */
  runUs: number;
}

/** A clock reading after a timer, so that the CPU work before it has moved workerd's clock. */
async function now(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  return performance.now();
}

/** Times `iterations` of each side, the baseline first. */
export async function measureB1(platform: LuaPlatform, factory: LuaFactory, iterations: number): Promise<B1Measure> {
  const harness = createHarness({
    runId: 'bench',
    store: new MemoryRunStore(),
    packs: new Map(),
    services: servicesOf(),
    operator: { ask: async () => ({ ok: false, message: 'no operator' }) },
    models: { provider: () => 'no model' },
  });
  let start = await now();
  for (let i = 0; i < iterations; i++) for (let j = 0; j < 20; j++) (await factory.createEngine()).global.close();
  const bareUs = ((await now()) - start) * 1000 / iterations;
  start = await now();
  for (let i = 0; i < iterations; i++) {
    const parsed = parsePrompt(B1_SOURCE, 'bench.md');
    if (!parsed.ok) throw new Error('the B1 prompt does not parse');
    const outcome = await runPrompt({ prompt: parsed.prompt, platform, harness });
    if (outcome.status !== 'completed' || outcome.result !== B1_RESULT) throw new Error(`B1 run: ${JSON.stringify(outcome)}`);
  }
  const runUs = ((await now()) - start) * 1000 / iterations;
  return { iterations, bareUs, runUs };
}
