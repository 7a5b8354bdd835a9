/**
 * What streaming a model round through Runvil's provider costs beside reading the same
 * stream with a plain fetch, in the same run of this script, against a loopback server that
 * speaks the Chat Completions stream (issue 30):
 *
 * - time to first delta: from the call to the first text the provider reports, beside from
 *   the fetch to the first chunk of the body (goal: at most 1 ms more at the median, in-process);
 * - tokens per second: the server writes one text event a millisecond; the rate at which the
 *   provider reports them beside the server's own rate of writing them (goal: at least 0.95x),
 *   and the plain fetch's beside it.
 *
 * Run with `npm run bench` (BENCH_SCALE=0.1 for a quick pass).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openAiProvider } from '../src/models/openai.ts';
import type { ModelRequest } from '../src/models/provider.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const firstDeltaRuns = Math.max(10, Math.round(100 * scale));
const tokens = Math.max(50, Math.round(500 * scale));
const rateRuns = 3;

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const END = `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 5 } })}\n\ndata: [DONE]\n\n`;

/** When the server wrote each text event of its last paced answer. */
let writes: number[] = [];

async function answer(response: ServerResponse, paced: boolean): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  if (!paced) {
    response.write(chunk('Hello'));
    response.end(chunk(' world') + END);
    return;
  }
  writes = [];
  for (let i = 0; i < tokens; i++) {
    response.write(chunk(` t${i}`));
    writes.push(performance.now());
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  response.end(END);
}

const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => void answer(response, request.url?.includes('paced') === true));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const request: ModelRequest = { role: 'writer', config: { model: 'bench' }, messages: [{ role: 'user', content: 'Go.' }], tools: null };
const body = JSON.stringify({ model: 'bench', messages: request.messages, stream: true, stream_options: { include_usage: true } });

/** A plain fetch of the stream: the time of each chunk of the body, from the fetch. */
async function plain(path: string): Promise<number[]> {
  const started = performance.now();
  const response = await fetch(`${base}${path}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const reader = response.body!.getReader();
  const times: number[] = [];
  for (;;) {
    const { done } = await reader.read();
    if (done) return times;
    times.push(performance.now() - started);
  }
}

/** The provider's streamed round: the time of each delta, from the call. */
async function viaProvider(path: string): Promise<number[]> {
  const provider = openAiProvider({ baseUrl: `${base}${path}` });
  const started = performance.now();
  const times: number[] = [];
  const outcome = await provider.round(request, undefined, () => times.push(performance.now() - started));
  if (!outcome.ok) throw new Error(outcome.message);
  return times;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
/** Events per second over a list of times (ms), from the first to the last. */
const rate = (times: number[]) => ((times.length - 1) * 1000) / (times.at(-1)! - times[0]!);

try {
  // Warm both paths (JIT, the connection pool), then alternate so drift hits both alike.
  await plain('/quick');
  await viaProvider('/quick');
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < firstDeltaRuns; i++) {
    ours.push((await viaProvider('/quick'))[0]!);
    theirs.push((await plain('/quick'))[0]!);
  }
  console.log(`S1 time to first delta, median of ${firstDeltaRuns}`);
  console.log(`  through the provider:  ${median(ours).toFixed(3)} ms`);
  console.log(`  plain fetch:           ${median(theirs).toFixed(3)} ms`);
  console.log(`  difference: ${(median(ours) - median(theirs)).toFixed(3)} ms, ratio ${(median(ours) / median(theirs)).toFixed(2)}x (goal: at most 1 ms more)`);

  const providerRates: number[] = [];
  const plainRates: number[] = [];
  const serverRates: number[] = [];
  for (let r = 0; r < rateRuns; r++) {
    providerRates.push(rate(await viaProvider('/paced')) / rate(writes));
    serverRates.push(rate(writes));
    plainRates.push(rate(await plain('/paced')) / rate(writes));
  }
  console.log(`S2 tokens per second, ${tokens} text events written one a millisecond, median of ${rateRuns}`);
  console.log(`  the server's own rate:  ${median(serverRates).toFixed(0)} events/s`);
  console.log(`  through the provider:   ${median(providerRates).toFixed(3)}x the server's (goal: at least 0.95x)`);
  console.log(`  plain fetch:            ${median(plainRates).toFixed(3)}x the server's`);
} finally {
  server.closeAllConnections();
  server.close();
}
