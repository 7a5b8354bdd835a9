/**
 * Fanout benchmarks in Node: `tasks.fanout` over 1,000 items, each arm in a VM of its own,
 * at most ARMS_AT_ONCE of them alive at once. Reports the time per arm, the peak number of
 * live VMs, and peak memory (the wasm heap every VM of the isolate shares, plus the JS heap),
 * beside 1,000 sequential `call`s of the same section as a baseline. A Worker isolate has
 * 128 MB. The scenario is bench/worker-fanout.ts, which bench/worker.ts also measures inside
 * workerd. Run with `npm run bench` (after bench/run.ts) or `node --import tsx bench/tasks.ts`;
 * BENCH_SCALE=0.1 runs a tenth of the items.
 */
import wasmoon from 'wasmoon';
import { LuaPlatform } from '../src/engine/lua/vm.ts';
import { ARMS_AT_ONCE } from '../src/engine/tasks.ts';
import { describeMeasure, expectedResult, ISOLATE_BYTES, measureFanout, VM_BOUND, type FanoutMeasure } from './worker-fanout.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const items = Math.max(10, Math.round(1000 * scale));
const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());

const clock = () => Number(process.hrtime.bigint()) / 1e6;
const jsHeap = () => process.memoryUsage().heapUsed;

async function measure(name: 'fanout' | 'calls'): Promise<FanoutMeasure> {
  globalThis.gc?.();
  const measured = await measureFanout(platform, name, items, { clock, jsHeap });
  if (measured.status !== 'completed' || measured.result !== expectedResult(items)) throw new Error(`${name}: ${measured.result}`);
  return measured;
}

// One untimed pass of each warms the JIT and the wasm heap.
await measure('calls');
await measure('fanout');
const rows: Record<string, number | string> = { items };
for (const name of ['calls', 'fanout'] as const) {
  const runs = [await measure(name), await measure(name), await measure(name)].sort((a, b) => a.ms - b.ms);
  const median = runs[1]!;
  const peakJs = Math.max(...runs.map((run) => run.peakJsGrowthBytes ?? 0));
  const peakVms = Math.max(...runs.map((run) => run.peakVms));
  console.log(describeMeasure({ ...median, peakJsGrowthBytes: peakJs, peakVms }));
  rows[`${name}_ms`] = +median.ms.toFixed(1);
  rows[`${name}_us_per_arm`] = +median.usPerArm.toFixed(0);
  rows[`${name}_peak_vms`] = peakVms;
  rows[`${name}_peak_mib`] = +((median.wasmBytes + peakJs) / 1048576).toFixed(1);
}
const bounded = (rows.fanout_peak_vms as number) <= VM_BOUND;
const fits = (rows.fanout_peak_mib as number) * 1048576 <= ISOLATE_BYTES;
console.log(`fanout live VMs bounded by ${ARMS_AT_ONCE} arms + the main chain: ${bounded ? 'yes' : 'NO'}; within a 128 MB isolate: ${fits ? 'yes' : 'NO'}`);
console.log(`RESULT ${JSON.stringify(rows)}`);
