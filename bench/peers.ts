/**
 * Measures the peers of ../shared/bench-peers (Vercel AI SDK, LangGraph JS) in the same
 * run as Runvil (`npm run bench`; `npm run bench:worker` runs LangGraph alone, for W3): their
 * scripts are copied to a cache folder, installed there once with `npm ci` (their own
 * lockfile), and run one after the other.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** A peer's median per workload, in microseconds, keyed like Runvil's results. */
export type PeerMedians = Record<string, number>;

/**
 * The peers' medians as ../shared/bench-peers/README.md records them (same workloads, same
 * machine kind, Node 20), for when they cannot be measured in the run.
 */
export const RECORDED: Record<string, { aiSdk?: number; langGraph: number }> = {
  'W1 one tool round': { aiSdk: 206, langGraph: 1959 },
  'W2 ten tool rounds': { aiSdk: 995, langGraph: 9559 },
  'W3 N=0': { langGraph: 1059 },
  'W3 N=10': { langGraph: 2033 },
  'W3 N=100': { langGraph: 11903 },
};

const SOURCE = resolve(import.meta.dirname, '../../shared/bench-peers');
const CACHE = resolve(import.meta.dirname, '../node_modules/.cache/runvil-bench-peers');

const NAMES: Record<string, string> = {
  'W1 one tool round (2 model rounds)': 'W1 one tool round',
  'W2 ten tool rounds (11 model rounds)': 'W2 ten tool rounds',
  'W3 resume after N=0 tool steps': 'W3 N=0',
  'W3 resume after N=10 tool steps': 'W3 N=10',
  'W3 resume after N=100 tool steps': 'W3 N=100',
};

/** Runs both peers; null (with the reason printed) when they cannot be installed or run. */
export function measurePeers(scale: string): { aiSdk: PeerMedians; langGraph: PeerMedians } | null {
  return installed(() => ({ aiSdk: run('ai-sdk.mjs', scale), langGraph: run('langgraph.mjs', scale) }));
}

/** Runs LangGraph's script alone (bench/worker.ts's W3 baseline); null as measurePeers says. */
export function measureLangGraph(scale: string): PeerMedians | null {
  return installed(() => run('langgraph.mjs', scale));
}

/** Copies the peers' scripts to the cache folder, installs them there once, then measures. */
function installed<T>(measure: () => T): T | null {
  try {
    if (!existsSync(SOURCE)) throw new Error(`${SOURCE} is not there`);
    mkdirSync(CACHE, { recursive: true });
    for (const file of readdirSync(SOURCE)) {
      if (file.endsWith('.mjs') || file === 'package.json' || file === 'package-lock.json') copyFileSync(join(SOURCE, file), join(CACHE, file));
    }
    if (!existsSync(join(CACHE, 'node_modules'))) {
      execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: CACHE, stdio: 'inherit' });
    }
    return measure();
  } catch (error) {
    console.log(`peers not measured (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); showing their recorded medians`);
    return null;
  }
}

function run(script: string, scale: string): PeerMedians {
  const output = execFileSync('node', [script], { cwd: CACHE, env: { ...process.env, BENCH_SCALE: scale }, encoding: 'utf8' });
  const line = output.split('\n').find((text) => text.startsWith('RESULT '));
  if (!line) throw new Error(`${script} printed no RESULT line`);
  const summary = JSON.parse(line.slice('RESULT '.length)) as { results: { name: string; median_us: number }[] };
  const medians: PeerMedians = {};
  for (const result of summary.results) {
    const name = NAMES[result.name];
    if (name) medians[name] = result.median_us;
  }
  return medians;
}
