/**
 * Fanout benchmarks: `tasks.fanout` over 1,000 items, each arm in a VM of its own, at most
 * ARMS_AT_ONCE of them alive at once. Reports the time per arm, the peak number of live VMs,
 * and peak memory (the wasm heap every VM of the isolate shares, plus the JS heap), beside
 * 1,000 sequential `call`s of the same section as a baseline. A Worker isolate has 128 MB.
 * Run with `npm run bench` (after bench/run.ts) or `node --import tsx bench/tasks.ts`;
 * BENCH_SCALE=0.1 runs a tenth of the items.
 */
import wasmoon from 'wasmoon';
import { parsePrompt } from '../src/prompt/parse.ts';
import { LuaPlatform, type LuaVm, type VmOptions } from '../src/engine/lua/vm.ts';
import { runPrompt } from '../src/engine/run.ts';
import { ARMS_AT_ONCE } from '../src/engine/tasks.ts';
import { createHarness, servicesOf } from '../src/host/harness.ts';
import { MemoryRunStore } from '../src/host/run-store.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const items = Math.max(10, Math.round(1000 * scale));
const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());

// Live VMs, counted as the Engine opens and closes them.
let liveVms = 0;
let peakVms = 0;
const newVm = platform.newVm.bind(platform);
platform.newVm = async (options?: VmOptions): Promise<LuaVm> => {
  const vm = await newVm(options);
  peakVms = Math.max(peakVms, ++liveVms);
  const close = vm.close.bind(vm);
  let closed = false;
  vm.close = () => {
    if (!closed) liveVms--;
    closed = true;
    close();
  };
  return vm;
};

const block = (code: string) => '```lua\n' + code + '\n```\n';
const ARM = `local words = {}
for i = 1, 50 do words[i] = item.name .. i end
local text = table.concat(words, ' ')
store.write('arms/' .. item.id .. '.txt', text)
return #text`;

const prompts = {
  fanout: `# Fanout\n\n## Main\n\n${block(`local list = {}
for i = 1, ${items} do list[i] = { id = i, name = 'item' } end
local results = tasks.fanout('## Arm', list)
local total = 0
for i = 1, #results do total = total + tonumber(results[i]) end
return #results .. ' arms, ' .. total .. ' characters'`)}\n## Arm\n\n${block(ARM)}`,
  calls: `# Calls\n\n## Main\n\n${block(`local total = 0
for i = 1, ${items} do total = total + tonumber(call('## Arm', { id = i, name = 'item' })) end
return ${items} .. ' arms, ' .. total .. ' characters'`)}\n## Arm\n\n${block(`local item = ...\n${ARM}`)}`,
};

const mib = (bytes: number) => (bytes / 1048576).toFixed(1);

async function measure(name: keyof typeof prompts): Promise<{ result: string; ms: number; peakJs: number; wasm: number }> {
  const parsed = parsePrompt(`---\nname: ${name}\ndescription: Bench.\nrunvil: 0\n---\n\n${prompts[name]}`, `${name}.md`);
  if (!parsed.ok) throw new Error(`${name} does not parse`);
  const harness = createHarness({
    runId: 'bench', store: new MemoryRunStore(), packs: new Map(), services: servicesOf(),
    operator: { ask: async () => ({ ok: false, message: 'no operator' }) },
    models: { provider: () => 'no model' },
  });
  globalThis.gc?.();
  const jsBefore = process.memoryUsage().heapUsed;
  let peakJs = 0;
  peakVms = 0;
  const started = process.hrtime.bigint();
  const outcome = await runPrompt({
    prompt: parsed.prompt, platform, harness,
    limits: { entries: items + 10 },
    onEvent: (event) => {
      if (event.type === 'section_entered') peakJs = Math.max(peakJs, process.memoryUsage().heapUsed - jsBefore);
    },
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (outcome.status !== 'completed') throw new Error(`${name}: ${outcome.error.kind}: ${outcome.error.message}`);
  return { result: outcome.result, ms, peakJs, wasm: platform.lua.module.HEAPU8.length };
}

// One untimed pass of each warms the JIT and the wasm heap.
await measure('calls');
await measure('fanout');
const rows: Record<string, number | string> = { items };
for (const name of ['calls', 'fanout'] as const) {
  const runs = [await measure(name), await measure(name), await measure(name)].sort((a, b) => a.ms - b.ms);
  const median = runs[1]!;
  const peakJs = Math.max(...runs.map((run) => run.peakJs));
  console.log(
    `${(name === 'fanout' ? `tasks.fanout, ${items} items` : `${items} sequential calls`).padEnd(28)} ${median.ms.toFixed(0).padStart(6)} ms  ` +
      `${((median.ms * 1000) / items).toFixed(0).padStart(5)} us/arm  peak live VMs ${String(peakVms).padStart(2)}  ` +
      `wasm heap ${mib(median.wasm)} MiB  JS heap growth ${mib(Math.max(0, peakJs))} MiB  (${median.result})`,
  );
  rows[`${name}_ms`] = +median.ms.toFixed(1);
  rows[`${name}_us_per_arm`] = +((median.ms * 1000) / items).toFixed(0);
  rows[`${name}_peak_vms`] = peakVms;
  rows[`${name}_peak_mib`] = +mib(median.wasm + Math.max(0, peakJs));
}
const bounded = (rows.fanout_peak_vms as number) <= ARMS_AT_ONCE + 1;
const fits = (rows.fanout_peak_mib as number) <= 128;
console.log(`fanout live VMs bounded by ${ARMS_AT_ONCE} arms + the main chain: ${bounded ? 'yes' : 'NO'}; within a 128 MB isolate: ${fits ? 'yes' : 'NO'}`);
console.log(`RESULT ${JSON.stringify(rows)}`);
