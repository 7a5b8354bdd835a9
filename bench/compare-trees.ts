/**
 * W1, W2 and W3 (N = 0, 10, 100, 1,000, and N = 1,000 with its events made again) of two
 * source trees, each sampled as bench/run.ts samples it (bench/schedule.ts), so that a change's
 * cost is read against its baseline at the same moment of a busy machine:
 *
 *   node --import tsx bench/compare-trees.ts <baseline tree> [candidate tree, default .] [pairs, default 6] [--interleaved]
 *
 * e.g. `git worktree add --detach ../base 40f0e88 && (cd ../base && npm ci)` and then
 * `node --import tsx bench/compare-trees.ts ../base`. Each tree's Engine is imported from the
 * tree (`<tree>/src/...`, with that tree's node_modules), and runs the workloads as
 * bench/run.ts does. A pair is, by default, one process per tree, run one after the other
 * (the order alternating from pair to pair); with `--interleaved`, one process that holds
 * both trees and times their runs in turn, one run of each at a time, so that what the
 * machine does from moment to moment falls on both alike (the load order alternates from
 * pair to pair). Here, on a shared 2-core machine, separate processes give single pairs from
 * 0.6x to 2x; interleaved, two copies of one tree come out within 2% of each other.
 * Printed: per pair the ratio candidate / baseline of each workload's median (wall time, and
 * for separate processes the CPU time of the process, which a busy machine inflates less),
 * then the median of those ratios.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PEER_SCHEDULE } from './schedule.ts';

const WORKLOADS = ['W1', 'W2', 'W3 N=0', 'W3 N=10', 'W3 N=100', 'W3 N=1000', 'W3 N=1000 remade'] as const;
type Medians = Record<string, { wall: number; cpu: number }>;

/** One workload of a tree: its run, and how many untimed and timed runs it gets. */
interface Workload {
  name: (typeof WORKLOADS)[number];
  op: () => Promise<void>;
  warmup: number;
  samples: number;
}

if (process.argv[2] === '--child')
  await child(
    process.argv.slice(3).map((tree) => resolve(tree)),
    Number(process.env.BENCH_SCALE ?? '1') || 1,
  );
else parent();

/** Runs the workloads of one tree, or of two in turn, and prints each tree's medians as one JSON line. */
async function child(trees: string[], scale: number): Promise<void> {
  const sets: Workload[][] = [];
  for (const tree of trees) sets.push(await workloadsOf(tree, scale));
  const medians: Medians[] = trees.map(() => ({}));
  for (let w = 0; w < WORKLOADS.length; w++) {
    const { name, warmup, samples } = sets[0]![w]!;
    for (let i = 0; i < warmup; i++) for (const set of sets) await set[w]!.op();
    const wall: number[][] = trees.map(() => []);
    const cpu: number[][] = trees.map(() => []);
    for (let i = 0; i < samples; i++) {
      for (let t = 0; t < sets.length; t++) {
        // Two trees take turns first, so neither always runs just after the other.
        const which = (i + t) % sets.length;
        const start = process.hrtime.bigint();
        const startCpu = process.cpuUsage();
        await sets[which]![w]!.op();
        const used = process.cpuUsage(startCpu);
        wall[which]!.push(Number(process.hrtime.bigint() - start) / 1000);
        cpu[which]!.push(used.user + used.system);
      }
    }
    trees.forEach((_, t) => (medians[t]![name] = { wall: median(wall[t]!), cpu: median(cpu[t]!) }));
  }
  console.log(`MEDIANS ${JSON.stringify(medians)}`);
}

/**
 * The workloads of bench/run.ts with the Engine of `tree`, unchanged (the peers' scripted
 * model and tools), written out here because a baseline tree's bench/run.ts exports none of
 * them. W3's runs are suspended at their ask here, untimed.
 */
async function workloadsOf(tree: string, scale: number): Promise<Workload[]> {
  const load = (path: string) => import(pathToFileURL(resolve(tree, path)).href);
  const { default: wasmoon } = await load('node_modules/wasmoon/dist/index.js');
  const { parsePrompt } = await load('src/prompt/parse.ts');
  const { LuaPlatform } = await load('src/engine/lua/vm.ts');
  const { runOnHost } = await load('src/host/host.ts');
  const { grabPack } = await load('bench/workloads.ts');
  const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());
  const n = (count: number) => Math.max(3, Math.round(count * scale));
  const workloads: Workload[] = [];

  type Request = { messages: { role: string }[] };
  const scriptedModel = (k: number, askAfter: boolean) => ({
    async round(request: Request) {
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
        return {
          ok: true,
          reply: { content: '', tool_calls: [{ id: `call_${r + 1}`, name: 'user-input_ask', arguments: { question: 'Favourite colour?' } }] },
        };
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
  type Operator = { ask: (q: unknown) => Promise<{ ok: true; text: string }> };
  const answering = (answer: string): Operator => ({ ask: async () => ({ ok: true, text: answer }) });
  const userInput = {
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
    call: async (_tool: unknown, args: { question?: unknown }, context: { operator: Operator }) => {
      const answer = await context.operator.ask({ question: String(args.question ?? '') });
      return { ok: true, output: answer.text };
    },
  };
  const host = (k: number, ask: boolean, operator: Operator) => ({ packs: [grabPack, userInput], operator, models: { provider: () => scriptedModel(k, ask) } });

  for (const [name, k] of [
    ['W1', 1],
    ['W2', 10],
  ] as const) {
    const target = loopPrompt('bench/grab');
    const config = host(k, false, answering('unused'));
    const schedule = PEER_SCHEDULE[name];
    workloads.push({
      name,
      op: async () => {
        const outcome = await runOnHost(platform, config, { prompt: target });
        if (outcome.status !== 'completed' || outcome.result !== 'done') throw new Error(`${name}: ${outcome.status}`);
      },
      warmup: n(schedule.warmup),
      samples: n(schedule.samples),
    });
  }
  for (const k of [0, 10, 100, 1000] as const) {
    const target = loopPrompt('bench/grab, user-input');
    const controller = new AbortController();
    const waiting = {
      ask: () => {
        controller.abort('suspended');
        return new Promise<never>(() => {});
      },
    };
    const suspended = await runOnHost(platform, host(k, true, waiting), { prompt: target, signal: controller.signal });
    if (suspended.status !== 'failed') throw new Error('W3 did not suspend');
    const journal = suspended.journal;
    // As a Durable Object resumes: the events it already holds are counted, not made again
    // (all but the interruption's run_failed). `remade`: as a fork on the command line
    // replays, every event made again.
    const eventsKnown = suspended.events.filter((event: { type: string }) => event.type !== 'run_failed').length;
    const resume = (known: number | undefined) => async () => {
      const outcome = await runOnHost(platform, host(k, true, answering('blue')), { prompt: target, journal, eventsKnown: known });
      if (outcome.status !== 'completed') throw new Error(`W3 resume: ${outcome.error.kind}: ${outcome.error.message}`);
    };
    const schedule = PEER_SCHEDULE[`W3 N=${k}`];
    const sampled = { warmup: n(schedule.warmup), samples: n(schedule.samples) };
    workloads.push({ name: `W3 N=${k}`, op: resume(eventsKnown), ...sampled });
    if (k === 1000) workloads.push({ name: 'W3 N=1000 remade', op: resume(undefined), ...sampled });
  }
  return workloads;
}

/** Runs the pairs and prints the per-pair ratios and their medians. */
function parent(): void {
  const interleaved = process.argv.includes('--interleaved');
  const [baseArg, candidateArg = '.', pairsArg = '6'] = process.argv.slice(2).filter((arg) => arg !== '--interleaved');
  if (baseArg === undefined) {
    throw new Error('usage: node --import tsx bench/compare-trees.ts <baseline tree> [candidate tree] [pairs] [--interleaved]');
  }
  const trees = { base: resolve(baseArg), candidate: resolve(candidateArg) };
  const run = (...inTurn: string[]): Medians[] => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', ...inTurn], {
      encoding: 'utf8',
      env: process.env,
      maxBuffer: 1 << 24,
    });
    const line = out.split('\n').find((l) => l.startsWith('MEDIANS '));
    if (line === undefined) throw new Error(`no medians from ${inTurn.join(' and ')}:\n${out}`);
    return JSON.parse(line.slice('MEDIANS '.length)) as Medians[];
  };
  const ratios: Record<'wall' | 'cpu', Record<string, number[]>> = { wall: {}, cpu: {} };
  const pairs = Number(pairsArg);
  const cell = (wall: number, cpu: number) => (interleaved ? wall.toFixed(2) : `${wall.toFixed(2)} (${cpu.toFixed(2)})`).padStart(18);
  console.log(
    `baseline ${trees.base}\ncandidate ${trees.candidate}\n${interleaved ? 'both in one process, runs in turn; ' : ''}ratio = candidate / baseline, per pair: wall${interleaved ? '' : ' (cpu)'}`,
  );
  console.log(`${'pair'.padEnd(6)}${WORKLOADS.map((w) => w.padStart(18)).join('')}`);
  for (let pair = 0; pair < pairs; pair++) {
    const order = pair % 2 === 0 ? [trees.base, trees.candidate] : [trees.candidate, trees.base];
    const [a, b] = interleaved ? run(...order) : [run(order[0]!)[0]!, run(order[1]!)[0]!];
    const [base, candidate] = pair % 2 === 0 ? [a!, b!] : [b!, a!];
    const cells = WORKLOADS.map((w) => {
      for (const kind of ['wall', 'cpu'] as const) (ratios[kind][w] ??= []).push(candidate[w]![kind] / base[w]![kind]);
      return cell(candidate[w]!.wall / base[w]!.wall, candidate[w]!.cpu / base[w]!.cpu);
    });
    console.log(
      `${String(pair + 1).padEnd(6)}${cells.join('')}   [${WORKLOADS.map((w) => `${w} ${base[w]!.wall.toFixed(0)}/${candidate[w]!.wall.toFixed(0)}us`).join(', ')}]`,
    );
  }
  console.log(`${'median'.padEnd(6)}${WORKLOADS.map((w) => cell(median(ratios.wall[w]!), median(ratios.cpu[w]!))).join('')}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
