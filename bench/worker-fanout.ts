/**
 * The fanout measurement: `tasks.fanout` over N items (1,000 by default), each arm in a VM
 * of its own, beside N sequential `call`s of the same section as a baseline. It reports the
 * time per arm, the peak number of live VMs, the wasm heap (which every VM of the isolate
 * shares, and which never shrinks), the peak Lua heap of the live VMs, and the JS heap when
 * the platform can tell it (Node can; workerd has no API for it).
 *
 * One module for every place it runs: bench/tasks.ts in Node, and inside workerd
 * bench/worker-entry.ts (`GET /bench/fanout`, driven by bench/worker.ts against the local
 * server) and test/worker/bundle/entry.ts (`GET /engine/fanout`, the Worker bundle as
 * deployed, checked by test/worker/tasks-fanout.test.ts). Inside workerd its importer loads
 * the Lua adapter first (src/worker/workerd-lua/README.md, "It loads first").
 */
import { parsePrompt } from '../src/prompt/parse.ts';
import type { LuaPlatform, LuaVm, VmOptions } from '../src/engine/lua/vm.ts';
import { runPrompt } from '../src/engine/run.ts';
import { ARMS_AT_ONCE } from '../src/engine/tasks.ts';
import { pureLuaHarness } from './workloads.ts';

/** A Worker isolate's memory. */
export const ISOLATE_BYTES = 128 * 1024 * 1024;

/** The most VMs a fanout should hold at once: its live arms and the chain that runs it. */
export const VM_BOUND = ARMS_AT_ONCE + 1;

const block = (code: string) => '```lua\n' + code + '\n```\n';

/** What each arm does: builds a text of 50 words from its item, writes it, returns its length. */
const ARM = `local words = {}
for i = 1, 50 do words[i] = item.name .. i end
local text = table.concat(words, ' ')
store.write('arms/' .. item.id .. '.txt', text)
return #text`;

/** Characters one arm's text has: 'item1 item2 ... item50'. */
const ARM_CHARACTERS = 50 * 4 + 9 + 41 * 2 + 49;

/** The run result of either prompt over `items` items. */
export const expectedResult = (items: number): string => `${items} arms, ${items * ARM_CHARACTERS} characters`;

/** The sections of the fanout over `items` items (and of its baseline, `calls`), without frontmatter. */
export function fanoutSections(name: 'fanout' | 'calls', items: number): string {
  if (name === 'fanout') {
    return `# Fanout\n\n## Main\n\n${block(`local list = {}
for i = 1, ${items} do list[i] = { id = i, name = 'item' } end
local results = tasks.fanout('## Arm', list)
local total = 0
for i = 1, #results do total = total + tonumber(results[i]) end
return #results .. ' arms, ' .. total .. ' characters'`)}\n## Arm\n\n${block(ARM)}`;
  }
  return `# Calls\n\n## Main\n\n${block(`local total = 0
for i = 1, ${items} do total = total + tonumber(call('## Arm', { id = i, name = 'item' })) end
return ${items} .. ' arms, ' .. total .. ' characters'`)}\n## Arm\n\n${block(`local item = ...\n${ARM}`)}`;
}

/** The whole prompt text, with `name` as its name. */
export function fanoutPrompt(name: 'fanout' | 'calls', items: number, promptName: string = name): string {
  return `---\nname: ${promptName}\ndescription: Bench.\nrunvil: 0\n---\n\n${fanoutSections(name, items)}`;
}

/** VMs the Engine holds open, counted as it opens and closes them, with the peak and their Lua heap. */
interface VmCounter {
  live: Set<LuaVm>;
  peak: number;
  peakLuaBytes: number;
}

const counters = new WeakMap<LuaPlatform, VmCounter>();

/** Counts the VMs of `platform` from now on (once per platform): every VM it opens, so measure with nothing else running on it. */
function counterOf(platform: LuaPlatform): VmCounter {
  let counter = counters.get(platform);
  if (counter) return counter;
  const made: VmCounter = { live: new Set(), peak: 0, peakLuaBytes: 0 };
  counter = made;
  counters.set(platform, made);
  const luaBytes = () => {
    let bytes = 0;
    for (const vm of made.live) bytes += vm.memoryUsed() ?? 0;
    return bytes;
  };
  const newVm = platform.newVm.bind(platform);
  platform.newVm = async (options?: VmOptions): Promise<LuaVm> => {
    const vm = await newVm(options);
    made.live.add(vm);
    made.peak = Math.max(made.peak, made.live.size);
    const close = vm.close.bind(vm);
    vm.close = () => {
      // Its heap at its end is as big as it got: sampled before it goes.
      made.peakLuaBytes = Math.max(made.peakLuaBytes, luaBytes());
      made.live.delete(vm);
      close();
    };
    return vm;
  };
  return made;
}

/** One measured run. */
export interface FanoutMeasure {
  name: 'fanout' | 'calls';
  items: number;
  status: 'completed' | 'failed';
  /** The run result, or its error as `Kind: message`. */
  result: string;
  ms: number;
  usPerArm: number;
  /** The most VMs open at once during the run. */
  peakVms: number;
  /** VMs still open after the run (0: every arm's VM closed). */
  vmsLeft: number;
  /** The wasm memory every VM of the isolate shares, after the run (it never shrinks, so its peak). */
  wasmBytes: number;
  /** The most Lua heap the open VMs held at once (sampled as each VM closed). */
  peakLuaBytes: number;
  /** How much the JS heap grew at its peak (sampled at each section entry), when the platform can tell. */
  peakJsGrowthBytes: number | null;
  /** Journal entries: one per arm's store.write, plus the scheduler's step records. */
  journal: number;
  events: number;
}

/** Runs the fanout (or its baseline) over `items` items on `platform`. `jsHeap` reads the JS heap in use, where the platform can. */
export async function measureFanout(
  platform: LuaPlatform,
  name: 'fanout' | 'calls',
  items: number,
  options: { jsHeap?: () => number; clock?: () => number } = {},
): Promise<FanoutMeasure> {
  const clock = options.clock ?? (() => performance.now());
  const parsed = parsePrompt(fanoutPrompt(name, items), `${name}.md`);
  if (!parsed.ok) throw new Error(`${name} does not parse: ${parsed.errors[0]?.message}`);
  const counter = counterOf(platform);
  counter.peak = counter.live.size;
  counter.peakLuaBytes = 0;
  const harness = pureLuaHarness();
  const jsBefore = options.jsHeap?.();
  let peakJs = 0;
  let events = 0;
  const started = clock();
  const outcome = await runPrompt({
    prompt: parsed.prompt,
    platform,
    harness,
    limits: { entries: items + 10 },
    onEvent: (event) => {
      events++;
      if (options.jsHeap && event.type === 'section_entered') peakJs = Math.max(peakJs, options.jsHeap() - jsBefore!);
    },
  });
  const ms = clock() - started;
  return {
    name,
    items,
    status: outcome.status,
    result: outcome.status === 'completed' ? outcome.result : `${outcome.error.kind}: ${outcome.error.message}`,
    ms,
    usPerArm: (ms * 1000) / items,
    peakVms: counter.peak,
    vmsLeft: counter.live.size,
    wasmBytes: platform.lua.module.HEAPU8.length,
    peakLuaBytes: counter.peakLuaBytes,
    peakJsGrowthBytes: options.jsHeap ? Math.max(0, peakJs) : null,
    journal: outcome.journal.length,
    events,
  };
}

const mib = (bytes: number) => (bytes / 1048576).toFixed(1);

/** One line of a measurement, as the benchmarks print it. */
export function describeMeasure(measure: FanoutMeasure): string {
  const what = measure.name === 'fanout' ? `tasks.fanout, ${measure.items} items` : `${measure.items} sequential calls`;
  const js = measure.peakJsGrowthBytes === null ? 'JS heap n/a' : `JS heap growth ${mib(measure.peakJsGrowthBytes)} MiB`;
  return (
    `${what.padEnd(28)} ${measure.ms.toFixed(0).padStart(6)} ms  ${measure.usPerArm.toFixed(0).padStart(5)} us/arm  ` +
    `peak live VMs ${String(measure.peakVms).padStart(2)}  wasm heap ${mib(measure.wasmBytes)} MiB  ` +
    `peak Lua heap ${mib(measure.peakLuaBytes)} MiB  ${js}  (${measure.result})`
  );
}
