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
import { B1_RESULT, B1_SOURCE, pureLuaHarness } from './workloads.ts';

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
  const harness = pureLuaHarness();
  let start = await now();
  for (let i = 0; i < iterations; i++) for (let j = 0; j < 20; j++) (await factory.createEngine()).global.close();
  const bareUs = (((await now()) - start) * 1000) / iterations;
  start = await now();
  for (let i = 0; i < iterations; i++) {
    const parsed = parsePrompt(B1_SOURCE, 'bench.md');
    if (!parsed.ok) throw new Error('the B1 prompt does not parse');
    const outcome = await runPrompt({ prompt: parsed.prompt, platform, harness });
    if (outcome.status !== 'completed' || outcome.result !== B1_RESULT) throw new Error(`B1 run: ${JSON.stringify(outcome)}`);
  }
  const runUs = (((await now()) - start) * 1000) / iterations;
  return { iterations, bareUs, runUs };
}

/**
 * bench/worker.ts's b1 part: B1 in the server's isolate, through `get` (GET /bench/b1 with
 * the API token), the median of 5 measurements after one untimed pass; prints it and answers
 * its figures.
 */
export async function b1Part(get: (path: string) => Promise<B1Measure>, scale: number): Promise<Record<string, number>> {
  const iterations = Math.max(5, Math.round(50 * scale));
  await get(`/bench/b1?iterations=${iterations}`);
  const runs: B1Measure[] = [];
  for (let i = 0; i < 5; i++) runs.push(await get(`/bench/b1?iterations=${iterations}`));
  // The run whose ratio is the median, so the three figures printed are of one measurement.
  const median = runs.map((run) => ({ run, ratio: run.runUs / run.bareUs })).sort((a, b) => a.ratio - b.ratio)[2]!;
  const ratio = median.ratio;
  console.log(
    `B1 in workerd (median of 5, ${iterations} iterations each): 20 bare wasmoon VMs ${median.run.bareUs.toFixed(0)} us | parse + run 20-section prompt ${median.run.runUs.toFixed(0)} us | ratio ${ratio.toFixed(2)}x (target <= 2x): ${ratio <= 2 ? 'within target' : 'OVER TARGET'}`,
  );
  return { workerd_b1_bare_us: Math.round(median.run.bareUs), workerd_b1_run_us: Math.round(median.run.runUs), workerd_b1_ratio: +ratio.toFixed(2) };
}
