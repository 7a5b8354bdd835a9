/**
 * What one outbound fetch costs workerd's CPU, with no inspector attached (as on Cloudflare)
 * and with one that has enabled the DevTools Network domain, as `wrangler dev`'s inspector
 * proxy does (wrangler's InspectorProxyWorker sends `Network.enable`): every fetch is then
 * reported to the inspector, and the report is forwarded through wrangler's processes. The
 * local server the rest of bench/worker.ts times is `wrangler dev`, so a notification's
 * fetch there pays for that report. A Worker of its own (Miniflare, workerd) POSTs to the
 * benchmark's receiver, one fetch after another.
 */
import { fetch as miniflareFetch, Miniflare } from 'miniflare';
import { processStats } from './worker-client.ts';

const SCRIPT = `export default {
  async fetch(request) {
    const { url, count } = await request.json();
    const body = JSON.stringify({ type: 'run.completed', timestamp: new Date().toISOString(), data: { run_id: 'f'.repeat(64), status: 'completed', result: 'blue' } });
    for (let i = 0; i < count; i++) {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'webhook-id': 'x.' + i }, body });
      await response.body?.cancel();
    }
    return new Response('ok');
  },
};`;

/** The CPU time (ms) of the workerd processes that are children of this process, by pid. */
function workerdCpu(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const stat of processStats()) if (stat.command === 'workerd' && stat.parent === process.pid) cpu.set(stat.pid, stat.ticks * 10);
  return cpu;
}

/** workerd's CPU per fetch (us) to `url`, over `count` fetches, with no inspector and with the Network domain enabled. */
export async function fetchCpu(url: string, count: number): Promise<{ none: number; network: number }> {
  const result = { none: 0, network: 0 };
  for (const mode of ['none', 'network'] as const) {
    const before = workerdCpu();
    const inspectorPort = mode === 'network' ? 9000 + Math.floor(Math.random() * 20000) : undefined;
    const mf = new Miniflare({
      name: 'fetch-cost',
      modules: true,
      script: SCRIPT,
      compatibilityDate: '2025-04-28',
      ...(inspectorPort ? { inspectorPort } : {}),
    });
    await mf.ready;
    let socket: { close(): void } | null = null;
    if (inspectorPort) {
      const response = await miniflareFetch(`http://127.0.0.1:${inspectorPort}/core:user:fetch-cost`, { headers: { upgrade: 'websocket' } });
      const ws = response.webSocket!;
      ws.accept();
      // Read what the inspector reports (as wrangler's proxy does), and enable what wrangler enables.
      let reported = 0;
      ws.addEventListener('message', () => reported++);
      ws.send(JSON.stringify({ id: 1, method: 'Runtime.enable' }));
      ws.send(JSON.stringify({ id: 2, method: 'Network.enable' }));
      socket = { close: () => (ws.close(), void reported) };
    }
    const run = (n: number) => mf.dispatchFetch('http://bench/', { method: 'POST', body: JSON.stringify({ url, count: n }) }).then((r) => r.text());
    await run(50);
    const [pid] = [...workerdCpu().keys()].filter((p) => !before.has(p));
    if (pid === undefined) throw new Error('the benchmark Worker has no workerd process of its own');
    const start = workerdCpu().get(pid)!;
    await run(count);
    result[mode] = ((workerdCpu().get(pid)! - start) * 1000) / count;
    socket?.close();
    await mf.dispose();
  }
  return result;
}
