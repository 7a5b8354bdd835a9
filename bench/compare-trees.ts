/**
 * W1, W2 and W3 (N = 0, 10, 100, 1,000, and N = 1,000 with its events made again) of two source trees, run alternately in separate
 * processes, so that a change's cost is read against its baseline at the same moment of a
 * busy machine:
 *
 *   node --import tsx bench/compare-trees.ts <baseline tree> [candidate tree, default .] [pairs, default 6]
 *
 * e.g. `git worktree add --detach ../base 40f0e88 && (cd ../base && npm ci)` and then
 * `node --import tsx bench/compare-trees.ts ../base`. Each process imports the Engine from
 * its tree (`<tree>/src/...`, with that tree's node_modules) and runs the workloads exactly as
 * bench/run.ts does; the order of the two alternates from pair to pair. Printed: per pair the
 * ratio candidate / baseline of each workload's median (wall time, and CPU time of the
 * process, which a busy machine inflates less), then the median of those ratios.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PEER_SCHEDULE } from './schedule.ts';

const WORKLOADS = ['W1', 'W2', 'W3 N=0', 'W3 N=10', 'W3 N=100', 'W3 N=1000', 'W3 N=1000 remade'] as const;
type Medians = Record<string, { wall: number; cpu: number }>;

if (process.argv[2] === '--child') await child(resolve(process.argv[3]!), Number(process.env.BENCH_SCALE ?? '1') || 1);
else parent();

/** Runs the workloads with the Engine of `tree` and prints their medians as one JSON line. */
async function child(tree: string, scale: number): Promise<void> {
  const load = (path: string) => import(pathToFileURL(resolve(tree, path)).href);
  const { default: wasmoon } = await load('node_modules/wasmoon/dist/index.js');
  const { parsePrompt } = await load('src/prompt/parse.ts');
  const { LuaPlatform } = await load('src/engine/lua/vm.ts');
  const { runOnHost } = await load('src/host/host.ts');
  const { grabPack } = await load('bench/workloads.ts');
  const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());
  const n = (count: number) => Math.max(3, Math.round(count * scale));
  const medians: Medians = {};
  const sample = async (name: string, iterations: number, op: () => Promise<void>, warmup = Math.max(3, Math.min(300, iterations))) => {
    for (let i = 0; i < warmup; i++) await op();
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const start = process.hrtime.bigint();
      const startCpu = process.cpuUsage();
      await op();
      const used = process.cpuUsage(startCpu);
      wall.push(Number(process.hrtime.bigint() - start) / 1000);
      cpu.push(used.user + used.system);
    }
    medians[name] = { wall: median(wall), cpu: median(cpu) };
  };

  // The workloads of bench/run.ts, unchanged (the peers' scripted model and tools), written out
  // here because a baseline tree's bench/run.ts exports none of them.
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
    await sample(
      name,
      n(schedule.samples),
      async () => {
        const outcome = await runOnHost(platform, config, { prompt: target });
        if (outcome.status !== 'completed' || outcome.result !== 'done') throw new Error(`${name}: ${outcome.status}`);
      },
      n(schedule.warmup),
    );
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
    await sample(`W3 N=${k}`, n(schedule.samples), resume(eventsKnown), n(schedule.warmup));
    if (k === 1000) await sample(`W3 N=${k} remade`, n(schedule.samples), resume(undefined), n(schedule.warmup));
  }
  console.log(`MEDIANS ${JSON.stringify(medians)}`);
}

/** Alternates the two trees' children and prints the per-pair ratios and their medians. */
function parent(): void {
  const [baseArg, candidateArg = '.', pairsArg = '6'] = process.argv.slice(2);
  if (baseArg === undefined) throw new Error('usage: node --import tsx bench/compare-trees.ts <baseline tree> [candidate tree] [pairs]');
  const trees = { base: resolve(baseArg), candidate: resolve(candidateArg) };
  const run = (tree: string): Medians => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', tree], {
      encoding: 'utf8',
      env: process.env,
      maxBuffer: 1 << 24,
    });
    const line = out.split('\n').find((l) => l.startsWith('MEDIANS '));
    if (line === undefined) throw new Error(`no medians from ${tree}:\n${out}`);
    return JSON.parse(line.slice('MEDIANS '.length)) as Medians;
  };
  const ratios: Record<'wall' | 'cpu', Record<string, number[]>> = { wall: {}, cpu: {} };
  const pairs = Number(pairsArg);
  console.log(`baseline ${trees.base}\ncandidate ${trees.candidate}\nratio = candidate / baseline, per pair: wall (cpu)`);
  console.log(`${'pair'.padEnd(6)}${WORKLOADS.map((w) => w.padStart(16)).join('')}`);
  for (let pair = 0; pair < pairs; pair++) {
    const first = pair % 2 === 0 ? 'base' : 'candidate';
    const a = run(trees[first]);
    const b = run(trees[first === 'base' ? 'candidate' : 'base']);
    const [base, candidate] = first === 'base' ? [a, b] : [b, a];
    const cells = WORKLOADS.map((w) => {
      for (const kind of ['wall', 'cpu'] as const) (ratios[kind][w] ??= []).push(candidate[w]![kind] / base[w]![kind]);
      return `${(candidate[w]!.wall / base[w]!.wall).toFixed(2)} (${(candidate[w]!.cpu / base[w]!.cpu).toFixed(2)})`.padStart(16);
    });
    console.log(
      `${String(pair + 1).padEnd(6)}${cells.join('')}   [${WORKLOADS.map((w) => `${w} ${base[w]!.wall.toFixed(0)}/${candidate[w]!.wall.toFixed(0)}us`).join(', ')}]`,
    );
  }
  console.log(
    `${'median'.padEnd(6)}${WORKLOADS.map((w) => `${median(ratios.wall[w]!).toFixed(2)} (${median(ratios.cpu[w]!).toFixed(2)})`.padStart(16)).join('')}`,
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
