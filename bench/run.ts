/**
 * Runvil's benchmarks. Every figure is measured beside a baseline in the same run:
 *  - B1: parse + run a 20-section pure-Lua prompt, as a ratio to 20 bare VM creations
 *    (target: at most 2x), and the memory one run takes (target: within 24 MiB);
 *  - W1/W2/W3: the peers' tool-loop and resume workloads (../shared/bench-peers/README.md),
 *    to put beside the Vercel AI SDK and LangGraph numbers measured there.
 * Run with `npm run bench` (BENCH_SCALE=0.1 for a quick pass).
 */
import wasmoon from 'wasmoon';
import { parsePrompt } from '../src/prompt/parse.ts';
import { LuaPlatform } from '../src/engine/lua/vm.ts';
import { runPrompt } from '../src/engine/run.ts';
import type { JournalEntry } from '../src/engine/journal.ts';
import { runOnHost, type HostConfig } from '../src/host/host.ts';
import type { Operator } from '../src/host/operator.ts';
import type { Pack } from '../src/host/pack.ts';
import type { ModelProvider, ModelRequest } from '../src/models/provider.ts';
import { measurePeers, RECORDED } from './peers.ts';
import { PEER_SCHEDULE } from './schedule.ts';
import { B1_RESULT, B1_SOURCE, grabPack, pureLuaHarness } from './workloads.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
// The peers run first, alone, so neither side competes for the CPU with the other.
const measuredPeers = process.env.BENCH_PEERS === '0' ? null : measurePeers(String(scale));
const n = (count: number) => Math.max(3, Math.round(count * scale));

/**
 * The median of `iterations` timed runs of op, after `warmup` untimed ones (by default as many,
 * up to 300), so the JIT has settled before anything is timed.
 */
async function sample(name: string, iterations: number, op: () => Promise<void>, warmup = Math.max(3, Math.min(300, iterations))): Promise<number> {
  for (let i = 0; i < warmup; i++) await op();
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    await op();
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  const p90 = times[Math.min(times.length - 1, Math.ceil(times.length * 0.9) - 1)]!;
  console.log(`${name.padEnd(40)} n=${String(iterations).padStart(5)}  median ${median.toFixed(1).padStart(9)} us  p90 ${p90.toFixed(1).padStart(9)} us`);
  return median;
}

const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());
const results: Record<string, number | string> = {};

// The peers' workloads first, as the peers' own scripts run them (W1, W2, W3), so both
// sides are measured in the same state of their process.
/** The peers' scripted model: K grab calls (one per reply), then an ask, or "done". */
const scriptedModel = (k: number, askAfter: boolean): ModelProvider => ({
  async round(request: ModelRequest) {
    const r = request.messages.filter((m) => m.role === 'tool').length;
    if (r < k)
      return {
        ok: true,
        reply: {
          content: '',
          tool_calls: [{ id: `call_${r + 1}`, name: 'grab_grab', arguments: { value: 'x' } }],
          usage: { input_tokens: 10, output_tokens: 5 },
        },
      };
    if (askAfter && r === k)
      return { ok: true, reply: { content: '', tool_calls: [{ id: `call_${r + 1}`, name: 'user-input_ask', arguments: { question: 'Favourite colour?' } }] } };
    return { ok: true, reply: { content: 'done', tool_calls: [] } };
  },
});
const loopPrompt = (uses: string) => {
  const parsed = parsePrompt(
    `---\nname: loop\ndescription: Tool loop.\nrunvil: 0\nuses: [${uses}]\nmodels:\n  writer: { round_cap: 5000 }\n---\n\n# Loop\n\n## Only\n\n\`\`\`lua\nmodels.use('writer')\ntools.offer(tools.required())\nmessages:user('Grab x.')\nreturn models.loop()\n\`\`\`\n`,
    'loop.md',
  );
  if (!parsed.ok) throw new Error('loop prompt');
  return parsed.prompt;
};
const answering = (answer: string): Operator => ({ ask: async () => ({ ok: true, text: answer }) });
const userInput: Pack = {
  manifest: {
    fqName: 'runvil/user-input',
    description: 'Ask the operator',
    tools: [
      {
        id: 'user-input/ask',
        description: 'Ask',
        parameters: { type: 'object', properties: { question: { type: 'string' } } },
        output: 'plain',
        trusted: true,
      },
    ],
  },
  call: async (_tool, args, context) => {
    const answer = await context.operator.ask({ question: String(args.question ?? '') });
    return answer.ok ? { ok: true, output: answer.text } : { ok: false, message: answer.message };
  },
};
const host = (k: number, ask: boolean, operator: Operator): HostConfig => ({
  packs: [grabPack, userInput],
  operator,
  models: { provider: () => scriptedModel(k, ask) },
});

for (const [name, k] of [
  ['W1 one tool round', 1],
  ['W2 ten tool rounds', 10],
] as const) {
  const target = loopPrompt('bench/grab');
  const config = host(k, false, answering('unused'));
  const op = async () => {
    const outcome = await runOnHost(platform, config, { prompt: target });
    if (outcome.status !== 'completed' || outcome.result !== 'done') throw new Error(`${name}: ${outcome.status}`);
  };
  const schedule = PEER_SCHEDULE[k === 1 ? 'W1' : 'W2'];
  results[name] = await sample(`${name} (durable journal)`, n(schedule.samples), op, n(schedule.warmup));
}

for (const k of [0, 10, 100, 1000] as const) {
  const target = loopPrompt('bench/grab, user-input');
  // Untimed: run to the ask and keep the journal, as a Durable Object would when it suspends.
  let journal: JournalEntry[] = [];
  const controller = new AbortController();
  const waiting: Operator = {
    ask: () => {
      controller.abort('suspended');
      return new Promise(() => {});
    },
  };
  const suspended = await runOnHost(platform, host(k, true, waiting), {
    prompt: target,
    signal: controller.signal,
    onJournal: (entry) => void journal.push(entry),
  });
  if (suspended.status !== 'failed') throw new Error('W3 did not suspend');
  journal = suspended.journal;
  // Timed: resume by replaying the journal, the ask answered "blue", as the Durable Object
  // resumes: the events it already holds (all but the interruption's run_failed) are counted,
  // not made again.
  const eventsKnown = suspended.events.filter((event) => event.type !== 'run_failed').length;
  const resume = async () => {
    const outcome = await runOnHost(platform, host(k, true, answering('blue')), { prompt: target, journal, eventsKnown });
    if (outcome.status !== 'completed') throw new Error(`W3 resume: ${outcome.error.kind}: ${outcome.error.message}`);
  };
  const schedule = PEER_SCHEDULE[`W3 N=${k}`];
  results[`W3 N=${k}`] = await sample(`W3 resume after interrupt, N=${k}`, n(schedule.samples), resume, n(schedule.warmup));
}

// B1: a 20-section pure-Lua prompt against 20 bare VMs ----------------------------------------
const source = B1_SOURCE;
const harness = pureLuaHarness();
const runTwenty = async () => {
  const parsed = parsePrompt(source, 'bench.md');
  if (!parsed.ok) throw new Error('bench prompt does not parse');
  const outcome = await runPrompt({ prompt: parsed.prompt, platform, harness });
  if (outcome.status !== 'completed' || outcome.result !== B1_RESULT) throw new Error(`bench run: ${JSON.stringify(outcome)}`);
};
// The baseline is a bare wasmoon VM as wasmoon offers one (factory.createEngine), the unit
// the platform notes measure. Runvil itself makes its VMs with the raw C API, cheaper still;
// that figure is printed too, so the ratio's basis is plain.
const factory = new wasmoon.LuaFactory();
const bareTwenty = async () => {
  for (let i = 0; i < 20; i++) (await factory.createEngine()).global.close();
};
const rawTwenty = async () => {
  for (let i = 0; i < 20; i++) (await platform.newVm()).close();
};
const iterations = n(200);
const bare = await sample('B1 baseline: 20 bare wasmoon VMs', iterations, bareTwenty);
await sample('B1 (for reference) 20 raw lua_newstate VMs', iterations, rawTwenty);
const twenty = await sample('B1 parse + run 20-section Lua prompt', iterations, runTwenty);
const ratio = twenty / bare;
console.log(`B1 ratio run / bare VMs: ${ratio.toFixed(2)}x (target <= 2x): ${ratio <= 2 ? 'within target' : 'OVER TARGET'}`);
results.b1_ratio = +ratio.toFixed(2);

// Memory of one run: the wasm heap (every VM of the isolate shares it) and the JS heap.
const heapBefore = platform.lua.module.HEAPU8.length;
globalThis.gc?.();
const jsBefore = process.memoryUsage().heapUsed;
let peakJs = 0;
for (let i = 0; i < 5; i++) {
  await runTwenty();
  peakJs = Math.max(peakJs, process.memoryUsage().heapUsed - jsBefore);
}
const wasmHeap = platform.lua.module.HEAPU8.length;
const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
console.log(
  `B1 memory: wasm heap ${mib(wasmHeap)} MiB (grew ${mib(wasmHeap - heapBefore)} MiB), JS heap growth during runs ${mib(Math.max(0, peakJs))} MiB; one run within 24 MiB: ${wasmHeap + Math.max(0, peakJs) <= 24 * 1048576 ? 'yes' : 'NO'}`,
);
results.b1_wasm_heap_mib = +mib(wasmHeap);

// The peers' medians: measured above in this run, or else as their README records them.
const PEERS: Record<string, { aiSdk?: number; langGraph: number }> = measuredPeers
  ? Object.fromEntries(
      Object.keys(RECORDED).map((name) => [name, { aiSdk: measuredPeers.aiSdk[name], langGraph: measuredPeers.langGraph[name] ?? RECORDED[name]!.langGraph }]),
    )
  : RECORDED;
console.log(`\nbeside the peers (${measuredPeers ? 'measured in this run' : 'their recorded medians'}; median us per op; ratio = Runvil / peer)`);
for (const [name, peer] of Object.entries(PEERS)) {
  const ours = results[name] as number;
  const vs = (theirs?: number) => (theirs === undefined ? 'n/a' : `${theirs} (${(ours / theirs).toFixed(2)}x)`);
  console.log(`${name.padEnd(22)} Runvil ${ours.toFixed(0).padStart(7)}   AI SDK ${vs(peer.aiSdk).padEnd(16)} LangGraph ${vs(peer.langGraph)}`);
}
const perRound = ((results['W2 ten tool rounds'] as number) - (results['W1 one tool round'] as number)) / 9;
const peerRound = (w1?: number, w2?: number) => (w1 === undefined || w2 === undefined ? 'n/a' : `${((w2 - w1) / 9).toFixed(0)} us`);
console.log(
  `per tool round ((W2 - W1) / 9): Runvil ${perRound.toFixed(0)} us, AI SDK ${peerRound(PEERS['W1 one tool round']!.aiSdk, PEERS['W2 ten tool rounds']!.aiSdk)}, LangGraph ${peerRound(PEERS['W1 one tool round']!.langGraph, PEERS['W2 ten tool rounds']!.langGraph)}`,
);
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
console.log(`RESULT ${JSON.stringify(results)}`);
