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
import { createHarness, servicesOf } from '../src/host/harness.ts';
import { runOnHost, type HostConfig } from '../src/host/host.ts';
import { MemoryRunStore } from '../src/host/run-store.ts';
import type { Operator } from '../src/host/operator.ts';
import type { Pack } from '../src/host/pack.ts';
import type { ModelProvider, ModelRequest } from '../src/models/provider.ts';
import { measurePeers, RECORDED } from './peers.ts';
import { grabPack } from './workloads.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
// The peers run first, alone, so neither side competes for the CPU with the other.
const measuredPeers = null;
const n = (count: number) => Math.max(3, Math.round(count * scale));

async function sample(name: string, iterations: number, op: () => Promise<void>): Promise<number> {
  // Warm up as the peers' harness does (hundreds of untimed ops for the short workloads), so
  // the JIT has settled on both sides before anything is timed.
  for (let i = 0; i < Math.max(3, Math.min(300, iterations)); i++) await op();
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
    if (r < k) return { ok: true, reply: { content: '', tool_calls: [{ id: `call_${r + 1}`, name: 'grab_grab', arguments: { value: 'x' } }], usage: { input_tokens: 10, output_tokens: 5 } } };
    if (askAfter && r === k) return { ok: true, reply: { content: '', tool_calls: [{ id: `call_${r + 1}`, name: 'user-input_ask', arguments: { question: 'Favourite colour?' } }] } };
    return { ok: true, reply: { content: 'done', tool_calls: [] } };
  },
});
const loopPrompt = (uses: string) => {
  const parsed = parsePrompt(`---\nname: loop\ndescription: Tool loop.\nrunvil: 0\nuses: [${uses}]\nmodels:\n  writer: { round_cap: 5000 }\n---\n\n# Loop\n\n## Only\n\n\`\`\`lua\nmodels.use('writer')\ntools.offer(tools.required())\nmessages:user('Grab x.')\nreturn models.loop()\n\`\`\`\n`, 'loop.md');
  if (!parsed.ok) throw new Error('loop prompt');
  return parsed.prompt;
};
const answering = (answer: string): Operator => ({ ask: async () => ({ ok: true, text: answer }) });
const userInput: Pack = {
  manifest: { fqName: 'runvil/user-input', description: 'Ask the operator', tools: [{ id: 'user-input/ask', description: 'Ask', parameters: { type: 'object', properties: { question: { type: 'string' } } }, output: 'plain', trusted: true }] },
  call: async (_tool, args, context) => {
    const answer = await context.operator.ask({ question: String(args.question ?? '') });
    return answer.ok ? { ok: true, output: answer.text } : { ok: false, message: answer.message };
  },
};
const host = (k: number, ask: boolean, operator: Operator): HostConfig => ({
  packs: [grabPack, userInput], operator, models: { provider: () => scriptedModel(k, ask) },
});


const target = loopPrompt('bench/grab');
const config = host(1, false, answering('unused'));
for (let i = 0; i < 300; i++) await runOnHost(platform, config, { prompt: target });
const t0 = performance.now();
for (let i = 0; i < 3000; i++) await runOnHost(platform, config, { prompt: target });
console.log('W1 mean us', ((performance.now() - t0) / 3000 * 1000).toFixed(0));
