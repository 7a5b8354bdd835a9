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
import { openAiStream } from '../src/models/stream/openai-stream.ts';
import { readReplyStream } from '../src/models/stream/sse-read.ts';

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
  // A delta holds every piece of one chunk of the stream (pieces that arrived together): each piece counts.
  const outcome = await provider.round(request, undefined, ({ text }) => {
    const at = performance.now() - started;
    for (let n = text.match(/ ?t\d+|Hello| world/g)?.length ?? 0; n > 0; n--) times.push(at);
  });
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
  const more: number[] = [];
  for (let i = 0; i < firstDeltaRuns; i++) {
    // Each order in turn: neither side always runs on the heels of the other.
    let our = 0;
    let their = 0;
    if (i % 2 === 0) {
      our = (await viaProvider('/quick'))[0]!;
      their = (await plain('/quick'))[0]!;
    } else {
      their = (await plain('/quick'))[0]!;
      our = (await viaProvider('/quick'))[0]!;
    }
    ours.push(our);
    theirs.push(their);
    more.push(our - their);
  }
  console.log(`S1 time to first delta, median of ${firstDeltaRuns}`);
  console.log(`  through the provider:  ${median(ours).toFixed(3)} ms`);
  console.log(`  plain fetch:           ${median(theirs).toFixed(3)} ms`);
  console.log(
    `  difference: ${median(more).toFixed(3)} ms (median of the rounds' differences), ratio ${(median(ours) / median(theirs)).toFixed(2)}x (goal: at most 1 ms more)`,
  );

  const providerRates: number[] = [];
  const plainRates: number[] = [];
  const serverRates: number[] = [];
  const viaProviderRate = async () => {
    providerRates.push(rate(await viaProvider('/paced')) / rate(writes));
    serverRates.push(rate(writes));
  };
  const plainRate = async () => plainRates.push(rate(await plain('/paced')) / rate(writes));
  for (let r = 0; r < rateRuns; r++) {
    if (r % 2 === 0) {
      await viaProviderRate();
      await plainRate();
    } else {
      await plainRate();
      await viaProviderRate();
    }
  }
  console.log(`S2 tokens per second, ${tokens} text events written one a millisecond, median of ${rateRuns}`);
  console.log(`  the server's own rate:  ${median(serverRates).toFixed(0)} events/s`);
  console.log(`  through the provider:   ${median(providerRates).toFixed(3)}x the server's (goal: at least 0.95x)`);
  console.log(`  plain fetch:            ${median(plainRates).toFixed(3)}x the server's`);

  // S3: the reader's own work per chunk (decode, parse, the bounds), with no network: a stream of
  // one text event per chunk read through readReplyStream, beside a bare loop of reads of the same
  // chunks, alternating which goes first.
  const encoded = new TextEncoder();
  const chunks = [...Array.from({ length: tokens }, (_, i) => encoded.encode(chunk(` t${i}`))), encoded.encode(END)];
  const inMemory = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const bytes of chunks) controller.enqueue(bytes);
        controller.close();
      },
    });
  const readerUs = async () => {
    const started = performance.now();
    await readReplyStream(inMemory(), openAiStream(), { idleMs: 30_000, maxBytes: 1 << 24 }, () => undefined);
    return ((performance.now() - started) * 1000) / chunks.length;
  };
  const bareUs = async () => {
    const started = performance.now();
    const reader = inMemory().getReader();
    while (!(await reader.read()).done);
    return ((performance.now() - started) * 1000) / chunks.length;
  };
  const readerTimes: number[] = [];
  const bareTimes: number[] = [];
  for (let r = 0; r < 40; r++) {
    if (r % 2 === 0) {
      readerTimes.push(await readerUs());
      bareTimes.push(await bareUs());
    } else {
      bareTimes.push(await bareUs());
      readerTimes.push(await readerUs());
    }
  }
  // The first rounds warm the JIT; the rest count.
  console.log(`S3 the reader's work per chunk, ${chunks.length} chunks in memory, median of the last 30 of 40 passes`);
  console.log(`  readReplyStream:   ${median(readerTimes.slice(10)).toFixed(2)} µs a chunk`);
  console.log(`  bare reads:        ${median(bareTimes.slice(10)).toFixed(2)} µs a chunk`);
} finally {
  server.closeAllConnections();
  server.close();
}
