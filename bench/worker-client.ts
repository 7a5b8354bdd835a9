/**
 * The Worker benchmark's client side (bench/worker.ts and its parts): the API of the local
 * server it started, the clock, medians, and W3 runs driven to their ask and resumed, one at
 * a time or back to back, timed inside the Worker (bench/worker-entry.ts).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { LocalServer } from '../scripts/local-server.mjs';

/** The API token the benchmark's server is started with. */
export const token = randomBytes(16).toString('hex');
let server: LocalServer | null = null;

/** Sets the local server the API calls go to. */
export function useServer(local: LocalServer): void {
  server = local;
}

/** Calls the API of the benchmark's server; the parsed answer, or an error unless its status is `expect`. */
export async function api<T = any>(method: string, path: string, body?: unknown, expect = 200): Promise<T> {
  const response = await fetch(`${server!.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status !== expect) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

/** This process's clock, in us. */
export const now = () => Number(process.hrtime.bigint()) / 1000;
/** The median of `values`. */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
/** The 90th percentile of `values`. */
export const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)]!;

/**
 * One W3 resume: start and drive to the ask (untimed), evict or not, answer (timed). Over
 * HTTP the time is the client's; `inWorker` answers through /bench/answer instead, which
 * times the same resume inside the Worker, without the local HTTP.
 */
export async function resumeOnce(n: number, evict: boolean, inWorker: boolean): Promise<number> {
  const [{ run, ask }] = (await suspendedRuns(n, 1, evict)) as [{ run: string; ask: string }];
  let us: number;
  let done: { status: string; result: string | null };
  if (inWorker) {
    const answered = await api<{ ms: number; view: typeof done }>('POST', `/bench/answer/${run}/${ask}`);
    us = answered.ms * 1000;
    done = answered.view;
  } else {
    const t0 = now();
    done = await api('POST', `/runs/${run}/asks/${ask}?wait=60`, { answer: 'blue' });
    us = now() - t0;
  }
  if (done.status !== 'completed' || done.result !== 'blue') throw new Error(`w3 N=${n} resume: ${JSON.stringify(done)}`);
  return us;
}

/** Starts `count` W3 runs of N steps and drives each to its ask (untimed); evicts their objects when asked. */
export async function suspendedRuns(n: number, count: number, evict: boolean, prompt = 'w3'): Promise<{ run: string; ask: string }[]> {
  return suspendedRunsOf(
    n,
    evict,
    Array.from({ length: count }, () => prompt),
  );
}

/** Starts a W3 run of N steps of each prompt of `prompts` and drives it to its ask (untimed); evicts their objects when asked. */
export async function suspendedRunsOf(n: number, evict: boolean, prompts: string[]): Promise<{ run: string; ask: string }[]> {
  const asks: { run: string; ask: string }[] = [];
  for (const prompt of prompts) {
    const waiting = await api('POST', `/prompts/${prompt}/runs?wait=60`, { args: { n } });
    if (waiting.status !== 'suspended') throw new Error(`w3 N=${n} did not suspend: ${JSON.stringify(waiting)}`);
    asks.push({ run: waiting.run_id, ask: waiting.pending[0].ask_id });
  }
  // Let the earlier runs' alarms write them to KV first (the run object's KV_SYNC_DELAY_MS),
  // so that no other run's work lands in the timed part.
  await new Promise((resolve) => setTimeout(resolve, 600));
  if (evict) {
    for (const { run } of asks) await api('POST', `/bench/evict/${run}`);
    // An evicted object is resumed a while after it went, not in the same moment: workerd
    // tears the aborted instance down after the eviction's answer, and a resume sent at once
    // would wait on that (about a millisecond), which no resume in production does.
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return asks;
}

/**
 * Batches of back-to-back resumes per row. Batch means of the same row move by up to a
 * quarter between batches on this machine, so the row takes the median of several.
 */
export const BATCHES = 7;

/** The mean W3 resume over `count` back-to-back resumes of their own runs, timed inside the Worker (us). */
export async function resumeBatch(n: number, evict: boolean, count: number, prompt = 'w3', suspended?: { run: string; ask: string }[]): Promise<number> {
  const asks = suspended ?? (await suspendedRuns(n, count, evict, prompt));
  const { ms, views } = await api<{ ms: number; views: { status: string; result: string | null }[] }>('POST', '/bench/answer-batch', asks);
  const wrong = views.find((view) => view.status !== 'completed' || view.result !== 'blue');
  if (wrong) throw new Error(`w3 N=${n} resume: ${JSON.stringify(wrong)}`);
  return (ms * 1000) / count;
}

/**
 * The CPU time (ms) used so far by workerd, by all the server's processes (workerd and
 * wrangler's Node process: the local server's process group), and by this process (the client and the notification
 * receiver), from /proc (Linux; the server's is in clock ticks of 10 ms).
 */
export function cpuMs(): { workerd: number; server: number; bench: number } {
  const group = server!.child.pid!;
  let ticks = 0;
  let workerd = 0;
  for (const stat of processStats()) {
    if (stat.group !== group) continue;
    ticks += stat.ticks;
    if (stat.command === 'workerd') workerd += stat.ticks;
  }
  const own = process.cpuUsage();
  return { workerd: workerd * 10, server: ticks * 10, bench: (own.user + own.system) / 1000 };
}

/** Each process's command, parent, process group and CPU time in clock ticks of 10 ms, from /proc/<pid>/stat (Linux). */
export function processStats(): { pid: number; command: string; parent: number; group: number; ticks: number }[] {
  const stats = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // The command sits in parentheses and may hold spaces; the fields after it start at field 3 (state).
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    stats.push({ pid: Number(pid), command, parent: Number(fields[1]), group: Number(fields[2]), ticks: Number(fields[11]) + Number(fields[12]) });
  }
  return stats;
}
