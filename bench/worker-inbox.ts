/**
 * The inbox and outbox parts of the Worker benchmark (bench/worker.ts): the benchmark's own
 * notification receiver on loopback (runvil.yaml's `notify:`), the time from a run's start
 * to its ask.created arriving and from an answer to the next ask's (`inbox`), the index's
 * list routes at a deployment's scale (`inbox`), and what the outbox costs W3 (`outbox`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, cpuMs, median, now, p90, resumeBatch, suspendedRuns, suspendedRunsOf } from './worker-client.ts';
import { W3 } from './workloads.ts';
import { NOTIFY_PIECES, type NotifyPiece } from './worker-notify-cost.ts';
import { fetchCpu } from './worker-fetch-cost.ts';

/** Notifications as the receiver got them: arrival times (us) by run and type, and who waits for the next. */
const arrivals = new Map<string, number[]>();
const waiting = new Map<string, () => void>();
/** How many connections and requests the receiver has had (workerd's fetch reuses a connection, or not), and its URL. */
const received = { connections: 0, requests: 0, url: '' };
export const NOTIFY_SECRET = 'whsec_YmVuY2gtbm90aWZ5LXNlY3JldC1vZi10aGUtcnVu';

/** The benchmark's notification receiver on 127.0.0.1: answers 204 and notes each arrival. */
export async function startReceiver(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { run_id: string } };
      const key = `${event.data.run_id} ${event.type}`;
      arrivals.set(key, [...(arrivals.get(key) ?? []), at]);
      waiting.get(key)?.();
      response.writeHead(204).end();
    });
  });
  server.on('connection', () => received.connections++);
  server.on('request', () => received.requests++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  received.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: received.url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Waits (up to a minute) for the `count`-th notification of `type` for `run`; its arrival time (us). */
async function arrival(run: string, type: string, count = 1): Promise<number> {
  const key = `${run} ${type}`;
  const deadline = Date.now() + 60_000;
  while ((arrivals.get(key)?.length ?? 0) < count) {
    if (Date.now() > deadline) throw new Error(`no ${type} for run ${run}`);
    // Woken by the receiver (no polling: the wait costs no CPU beside what is measured).
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1_000);
      waiting.set(key, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    waiting.delete(key);
  }
  return arrivals.get(key)![count - 1]!;
}

const BENCH_ASK = `---
name: bench-ask
description: Asks twice.
runvil: 0
uses: [user-input]
---
# Bench ask

## Ask
\`\`\`lua
local a = tools.call('user-input/ask', { question = 'First?' })
local b = tools.call('user-input/ask', { question = 'Second?' })
return a .. b
\`\`\`
`;

export async function inbox(scale: number): Promise<Record<string, number>> {
  const results: Record<string, number> = {};
  const health: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t0 = now();
    await api('GET', '/health');
    health.push(now() - t0);
  }
  console.log(`HTTP round trip (GET /health)            median ${(median(health) / 1000).toFixed(2).padStart(7)} ms`);
  results.health_ms = +(median(health) / 1000).toFixed(2);

  await api('PUT', '/prompts/bench-ask', BENCH_ASK, 201);
  const toCreated: number[] = [];
  const toNext: number[] = [];
  const count = Math.max(5, Math.round(30 * scale));
  for (let i = 0; i < count; i++) {
    const t0 = now();
    const { run_id: run } = await api('POST', '/prompts/bench-ask/runs', {}, 202);
    toCreated.push((await arrival(run, 'ask.created')) - t0);
    const view = await api('GET', `/runs/${run}`);
    const t1 = now();
    await api('POST', `/runs/${run}/asks/${view.pending[0].ask_id}`, { answer: 'a' });
    toNext.push((await arrival(run, 'ask.created', 2)) - t1);
    await api('POST', `/runs/${run}/cancel`);
  }
  const ms = (us: number) => (us / 1000).toFixed(1).padStart(7);
  console.log(`run start -> ask.created received        median ${ms(median(toCreated))} ms  p90 ${ms(p90(toCreated))} ms  n=${count}`);
  console.log(`answer -> next ask's ask.created         median ${ms(median(toNext))} ms  p90 ${ms(p90(toNext))} ms  n=${count}`);
  Object.assign(results, {
    ask_created_notified_median_ms: +(median(toCreated) / 1000).toFixed(1),
    ask_created_notified_p90_ms: +(p90(toCreated) / 1000).toFixed(1),
    answer_to_next_ask_notified_median_ms: +(median(toNext) / 1000).toFixed(1),
    answer_to_next_ask_notified_p90_ms: +(p90(toNext) / 1000).toFixed(1),
  });

  const runs = Math.round(100_000 * scale);
  const asks = Math.round(10_000 * scale);
  const seeded = now();
  await api('POST', `/bench/seed-index?runs=${runs}&asks=${asks}`);
  console.log(`seeded the index with ${runs} runs and ${asks} pending asks in ${((now() - seeded) / 1e6).toFixed(1)} s`);
  const timeList = async (name: string, path: string): Promise<void> => {
    const times: number[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 40; i++) {
      // Every other request reads a page further on, following the cursor: deep pages cost the same.
      const t0 = now();
      const page: { next_cursor: string | null } = await api('GET', `${path}${i % 2 === 1 && cursor ? `&cursor=${cursor}` : ''}`);
      times.push(now() - t0);
      cursor = page.next_cursor ?? cursor;
    }
    console.log(`${name.padEnd(40)} median ${ms(median(times))} ms  p90 ${ms(p90(times))} ms  (GET /health ${ms(median(health))} ms)`);
    results[`${name.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_median_ms`] = +(median(times) / 1000).toFixed(2);
  };
  await timeList(`GET /asks, ${asks} pending, 50 a page`, '/asks?status=pending&limit=50');
  await timeList(`GET /asks?prompt=, ${asks} pending`, '/asks?status=pending&prompt=seed-1&limit=50');
  await timeList(`GET /runs, ${runs} runs, 50 a page`, '/runs?limit=50');
  await timeList(`GET /runs?prompt=&status=, ${runs} runs`, '/runs?prompt=seed-2&status=completed&limit=50');
  return results;
}

/**
 * Where a notification's cost goes inside workerd: each piece of a delivery done `count`
 * times in a run object (/bench/notify-cost, worker-notify-cost.ts): its time, less the
 * RPC's own (the `rpc` piece), and the CPU it took in workerd, in all the server's
 * processes, and in this process (the receiver), per piece done.
 */
async function notifyPieces(count: number): Promise<Record<string, number>> {
  const results: Record<string, number> = {};
  const time = async (piece: NotifyPiece) => (await api<{ ms: number }>('POST', `/bench/notify-cost?piece=${encodeURIComponent(piece)}&count=${count}`)).ms;
  const rows: string[] = [];
  let rpcUs = 0;
  for (const piece of NOTIFY_PIECES) {
    await time(piece);
    const times: number[] = [];
    const before = cpuMs();
    const rounds = 5;
    for (let i = 0; i < rounds; i++) times.push(await time(piece));
    const after = cpuMs();
    const us = (median(times) * 1000) / count;
    if (piece === 'rpc') rpcUs = us;
    const cpu = (what: 'workerd' | 'server' | 'bench') => ((after[what] - before[what]) * 1000) / (rounds * count);
    const name = piece.replace(/[^a-z]+/g, '_');
    results[`notify_piece_${name}_us`] = +Math.max(0, us - (piece === 'rpc' ? 0 : rpcUs)).toFixed(1);
    results[`notify_piece_${name}_workerd_cpu_us`] = +cpu('workerd').toFixed(0);
    results[`notify_piece_${name}_server_cpu_us`] = +cpu('server').toFixed(0);
    results[`notify_piece_${name}_bench_cpu_us`] = +cpu('bench').toFixed(0);
    rows.push(
      `  ${piece.padEnd(16)} ${results[`notify_piece_${name}_us`]!.toFixed(1).padStart(7)} us  CPU: workerd ${cpu('workerd').toFixed(0).padStart(5)} us, all the server ${cpu('server').toFixed(0).padStart(5)} us, receiver ${cpu('bench').toFixed(0).padStart(5)} us`,
    );
  }
  console.log(`one notification's pieces inside workerd, each done ${count} times in a row (median of 5; CPU over the 5, per piece):`);
  for (const row of rows) console.log(row);
  console.log(`  the receiver had ${received.connections} connection(s) for ${received.requests} requests`);
  // The same fetch from a Worker of its own: with no inspector, and with wrangler dev's (the Network domain on).
  const fetchUs = await fetchCpu(`${received.url}/notify`, count * 5);
  console.log(
    `one fetch to the receiver, workerd's CPU: ${fetchUs.none.toFixed(0)} us with no inspector (as deployed), ${fetchUs.network.toFixed(0)} us with the inspector's Network domain on (wrangler dev)`,
  );
  results.fetch_workerd_cpu_no_inspector_us = +fetchUs.none.toFixed(0);
  results.fetch_workerd_cpu_network_inspector_us = +fetchUs.network.toFixed(0);
  return results;
}

/** The prompts of the outbox part: W3 with nothing to deliver, with index rows only, with index rows and notifications. */
const VARIANTS = ['w3-bare', 'w3-indexed', 'w3'] as const;
type Variant = (typeof VARIANTS)[number];

/** The mean of the middle 80% of `values`: workerd's clock moves in whole milliseconds, a median of single resumes would too. */
const trimmedMean = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const cut = Math.floor(sorted.length / 10);
  const middle = sorted.slice(cut, sorted.length - cut);
  return middle.reduce((sum, value) => sum + value, 0) / middle.length;
};

/** How long the one-at-a-time rows wait after each resume, so that its index write (200 ms on) lands before the next resume. */
const SETTLE_MS = 300;

/**
 * One resume at a time of each variant in turn, each after the one before has delivered
 * everything it owes (its notifications received, then SETTLE_MS for all variants alike):
 * what a resume's own latency pays for the outbox. The mean of the middle 80% per variant (us).
 */
async function resumeLatency(n: number, evict: boolean, count: number): Promise<Map<Variant, number>> {
  const times = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
  for (let i = 0; i < count; i++) {
    // Each round starts with another variant, so that none always follows the same one; its
    // runs are made just before (an object left idle for long is evicted by workerd, and its
    // resume would be a replay).
    const order = [...VARIANTS.slice(i % 3), ...VARIANTS.slice(0, i % 3)];
    const suspended = await suspendedRunsOf(n, evict, order);
    for (const [j, prompt] of order.entries()) {
      const { run, ask } = suspended[j]!;
      const answered = await api<{ ms: number; view: { status: string; result: string | null } }>('POST', `/bench/answer/${run}/${ask}`);
      if (answered.view.status !== 'completed' || answered.view.result !== 'blue') throw new Error(`w3 N=${n}: ${JSON.stringify(answered.view)}`);
      times.get(prompt)!.push(answered.ms * 1000);
      if (prompt === 'w3') await arrival(run, 'run.completed');
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    }
  }
  return new Map(VARIANTS.map((v) => [v, trimmedMean(times.get(v)!)]));
}

/** Back-to-back batches of each variant in turn: the mean resume (median of the batches, us), and the CPU per resume of the server and of this process (the receiver), ms. */
async function resumeThroughput(
  n: number,
  evict: boolean,
  count: number,
): Promise<Map<Variant, { us: number; workerd: number; server: number; bench: number }>> {
  for (const prompt of VARIANTS) await resumeBatch(n, evict, count, prompt);
  const batches = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
  const cpu = new Map<Variant, { workerd: number; server: number; bench: number }>(VARIANTS.map((v) => [v, { workerd: 0, server: 0, bench: 0 }]));
  const rounds = 5;
  for (let b = 0; b < rounds; b++) {
    for (const prompt of [...VARIANTS.slice(b % 3), ...VARIANTS.slice(0, b % 3)]) {
      const asks = await suspendedRuns(n, count, evict, prompt);
      const before = cpuMs();
      batches.get(prompt)!.push(await resumeBatch(n, evict, count, prompt, asks));
      // What the batch left to deliver (the last resume's notifications) is part of its cost.
      if (prompt === 'w3') await arrival(asks.at(-1)!.run, 'run.completed');
      const after = cpuMs();
      cpu.get(prompt)!.workerd += after.workerd - before.workerd;
      cpu.get(prompt)!.server += after.server - before.server;
      cpu.get(prompt)!.bench += after.bench - before.bench;
    }
  }
  const resumes = rounds * count;
  const per = (v: Variant) =>
    ({ us: median(batches.get(v)!), ...Object.fromEntries(Object.entries(cpu.get(v)!).map(([k, ms]) => [k, ms / resumes])) }) as {
      us: number;
      workerd: number;
      server: number;
      bench: number;
    };
  return new Map(VARIANTS.map((v) => [v, per(v)]));
}

/**
 * What the outbox costs W3: `w3` (index rows and two notifications per resume: ask.closed,
 * run.completed) and `w3-indexed` (index rows only) beside `w3-bare` (nothing to deliver),
 * timed inside the Worker two ways: one resume at a time, its deliveries done before the
 * next (latency), and back to back (throughput, which pays for the deliveries' CPU on this
 * machine's cores: workerd's fetch and the receiver both run here).
 */
export async function outboxCost(scale: number): Promise<Record<string, number>> {
  const results = await notifyPieces(Math.max(20, Math.round(200 * scale)));
  await api('PUT', '/prompts/w3', W3, 201).catch(() => undefined);
  await api('PUT', '/prompts/w3-bare', W3.replace('name: w3', 'name: w3-bare'), 201);
  await api('PUT', '/prompts/w3-indexed', W3.replace('name: w3', 'name: w3-indexed'), 201);
  const count = Math.max(3, Math.round(20 * scale));
  const verdict = (ratio: number) => `${ratio.toFixed(3)}x (target <= 1.10): ${ratio <= 1.1 ? 'within target' : 'OVER TARGET'}`;
  for (const [n, evict] of [
    [10, false],
    [100, true],
  ] as const) {
    const key = `w3_n${n}_${evict ? 'replay' : 'live'}`;
    const latency = await resumeLatency(n, evict, count);
    const seen = { ...received };
    const throughput = await resumeThroughput(n, evict, count);
    const [connections, requests] = [received.connections - seen.connections, received.requests - seen.requests];
    console.log(`W3 N=${n} back to back: the receiver had ${connections} new connection(s) for ${requests} notifications`);
    results[`${key}_receiver_connections_per_notification`] = +(connections / Math.max(1, requests)).toFixed(2);
    const bare = { latency: latency.get('w3-bare')!, throughput: throughput.get('w3-bare')! };
    for (const [prompt, what] of [
      ['w3-indexed', 'index rows'],
      ['w3', 'index rows + notifications'],
    ] as const) {
      const label = `W3 N=${n} resume ${evict ? 'by replay' : 'live'}, ${what}`;
      const [one, batch] = [latency.get(prompt)!, throughput.get(prompt)!];
      console.log(`${label}:`);
      console.log(`  one at a time   ${(one / 1000).toFixed(2)} ms beside ${(bare.latency / 1000).toFixed(2)} ms bare: ${verdict(one / bare.latency)}`);
      console.log(
        `  back to back    ${(batch.us / 1000).toFixed(2)} ms beside ${(bare.throughput.us / 1000).toFixed(2)} ms bare: ${verdict(batch.us / bare.throughput.us)}`,
      );
      console.log(
        `  CPU per resume  workerd ${batch.workerd.toFixed(2)} ms (bare ${bare.throughput.workerd.toFixed(2)}), all the server ${batch.server.toFixed(2)} ms (bare ${bare.throughput.server.toFixed(2)}), receiver and client ${batch.bench.toFixed(2)} ms (bare ${bare.throughput.bench.toFixed(2)})`,
      );
      const kind = prompt === 'w3' ? 'notify' : 'index';
      results[`${key}_${kind}_latency_ratio`] = +(one / bare.latency).toFixed(3);
      results[`${key}_${kind}_ratio`] = +(batch.us / bare.throughput.us).toFixed(3);
      results[`${key}_${kind}_workerd_cpu_ms`] = +batch.workerd.toFixed(2);
      results[`${key}_${kind}_server_cpu_ms`] = +batch.server.toFixed(2);
      results[`${key}_${kind}_bench_cpu_ms`] = +batch.bench.toFixed(2);
    }
    results[`${key}_bare_workerd_cpu_ms`] = +bare.throughput.workerd.toFixed(2);
    results[`${key}_bare_server_cpu_ms`] = +bare.throughput.server.toFixed(2);
    results[`${key}_bare_bench_cpu_ms`] = +bare.throughput.bench.toFixed(2);
    // Over HTTP the answer route also waits for the index write of the answer (read-your-writes), which runs while the run resumes.
    const overHttp = async (prompt: string): Promise<number> => {
      const asks = await suspendedRuns(n, count, evict, prompt);
      const times: number[] = [];
      for (const { run, ask } of asks) {
        const t0 = now();
        const done = await api('POST', `/runs/${run}/asks/${ask}?wait=60`, { answer: 'blue' });
        if (done.status !== 'completed') throw new Error(`w3 over HTTP: ${JSON.stringify(done)}`);
        times.push(now() - t0);
      }
      return median(times);
    };
    const [httpBare, httpOutbox] = [await overHttp('w3-bare'), await overHttp('w3')];
    console.log(
      `  over HTTP (POST ...?wait=) ${(httpOutbox / 1000).toFixed(2)} ms beside ${(httpBare / 1000).toFixed(2)} ms: ${(httpOutbox / httpBare).toFixed(3)}x (the answer's own index write, read-your-writes, included)`,
    );
    results[`${key}_outbox_http_ratio`] = +(httpOutbox / httpBare).toFixed(3);
  }
  return results;
}
