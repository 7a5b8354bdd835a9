/**
 * The Worker benchmark's `stream` part (bench/worker.ts): a model step's text through the
 * local server beside the same stream read straight from the loopback model server
 * (scripts/stream-servers.mjs, OPENAI_BASE_URL of the server), in the same run.
 *
 * Time to first delta: the model server holds its reply before the first piece; the clock
 * starts when it lets go, and stops when the piece arrives, as a model_delta on the run's
 * `?stream=1` response (the run started, its step in flight) or as a chunk of the straight
 * request. Rounds alternate which goes first; the row is the medians and the median of the
 * differences (goal: at most 5 ms more through the server).
 *
 * Tokens per second: the server writes one piece a millisecond (paced by its timer); each
 * side's rate is its pieces over the time from the first to the last arriving, beside the
 * server's own rate of writing them (goal: at least 0.95x).
 */
import type { LocalServer } from '../scripts/local-server.mjs';
import { startStreamServer, type StreamServer } from '../scripts/stream-servers.mjs';
import { median } from './worker-client.ts';

/** The loopback model server the benchmark's local server streams from. */
export type BenchStreamServer = StreamServer;

/** How many pieces a reply has (set per measure). */
let replyPieces = 8;

/** Starts the loopback model server; its OPENAI_BASE_URL goes into the local server's environment. */
export function startBenchStreamServer(): Promise<BenchStreamServer> {
  return startStreamServer('openai', { pieces: () => Array.from({ length: replyPieces }, (_, i) => `tok${i} `) });
}

const PROMPT = `---
name: bench-stream
description: One streamed model step.
runvil: 0
models:
  writer: { provider: openai, model: bench }
---
# Bench stream

## Write
\`\`\`lua
return models.get('writer'):infer('go')
\`\`\`
`;

/** Reads server-sent messages and notes when each model piece arrived (`pieces(data)`: how many a message holds). */
async function piecesArriving(body: ReadableStream<Uint8Array>, pieces: (data: string) => number, onPiece: (at: number) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data === undefined) continue;
      const at = performance.now();
      for (let n = pieces(data); n > 0; n--) onPiece(at);
    }
  }
}

// A model_delta may hold several pieces (those that arrived while the client was still reading the last chunk).
const runvilPieces = (data: string) => (data.includes('"type":"model_delta"') && !data.includes('"restart"') ? (data.match(/tok\d+ /g)?.length ?? 0) : 0);
const straightPieces = (data: string) => (data.includes('"content":"tok') ? 1 : 0);

/** One reply read through the local server (`?stream=1`) or straight: when the first piece arrived after the release, and each piece's arrival. */
async function oneReply(
  server: LocalServer,
  token: string,
  model: BenchStreamServer,
  via: 'runvil' | 'straight',
): Promise<{ firstMs: number; arrivals: number[] }> {
  const arrivals: number[] = [];
  const before = model.requests.length;
  const response =
    via === 'runvil'
      ? await fetch(`${server.base}/prompts/bench-stream/runs?stream=1`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify({}),
        })
      : await fetch(`${model.url}/chat/completions`, {
          method: 'POST',
          body: JSON.stringify({ model: 'bench', stream: true, messages: [{ role: 'user', content: 'go' }] }),
        });
  if (!response.ok || !response.body) throw new Error(`${via}: ${response.status} ${await response.text()}`);
  const reading = piecesArriving(response.body, via === 'runvil' ? runvilPieces : straightPieces, (at) => arrivals.push(at));
  await model.nextRequest(before + 1);
  // The request reached the model server, which holds before its first piece: the clock starts as it lets go.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const released = performance.now();
  model.release();
  await reading;
  if (arrivals.length !== replyPieces) throw new Error(`${via}: ${arrivals.length} pieces arrived of ${replyPieces}`);
  return { firstMs: arrivals[0]! - released, arrivals };
}

/** Time to first delta and tokens per second, through the local server beside straight. */
export async function streamDeltas(server: LocalServer, token: string, model: BenchStreamServer, scale: number): Promise<Record<string, number>> {
  const put = await fetch(`${server.base}/prompts/bench-stream`, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: PROMPT });
  if (!put.ok) throw new Error(`PUT /prompts/bench-stream: ${put.status} ${await put.text()}`);
  const rounds = Math.max(5, Math.round(20 * scale));

  // Time to first delta: short replies, released as soon as the request is in.
  replyPieces = 8;
  model.holdAfter = 0;
  model.paceMs = 0;
  await oneReply(server, token, model, 'runvil');
  await oneReply(server, token, model, 'straight');
  const first = { runvil: [] as number[], straight: [] as number[], more: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['runvil', 'straight'] as const) : (['straight', 'runvil'] as const);
    const took = { runvil: 0, straight: 0 };
    for (const via of order) took[via] = (await oneReply(server, token, model, via)).firstMs;
    first.runvil.push(took.runvil);
    first.straight.push(took.straight);
    first.more.push(took.runvil - took.straight);
  }

  // Tokens per second: one piece a millisecond.
  replyPieces = Math.max(100, Math.round(400 * scale));
  model.paceMs = 1;
  const rate = { runvil: [] as number[], straight: [] as number[], server: [] as number[] };
  const perSecond = (times: number[]) => ((times.length - 1) * 1000) / (times.at(-1)! - times[0]!);
  const rateRounds = Math.max(2, Math.round(4 * scale));
  for (let r = 0; r < rateRounds; r++) {
    for (const via of r % 2 === 0 ? (['runvil', 'straight'] as const) : (['straight', 'runvil'] as const)) {
      const { arrivals } = await oneReply(server, token, model, via);
      rate[via].push(perSecond(arrivals));
      rate.server.push(perSecond(model.wroteAt));
    }
  }
  model.holdAfter = null;
  model.paceMs = 0;

  const moreMs = median(first.more);
  const [runvilRate, straightRate, serverRate] = [median(rate.runvil), median(rate.straight), median(rate.server)];
  const rateRatio = runvilRate / serverRate;
  console.log(
    `stream, time to first delta, median ms: through the local server ${median(first.runvil).toFixed(2)} | straight to the model server ${median(first.straight).toFixed(2)} | ${moreMs.toFixed(2)} ms more (median of ${rounds} interleaved rounds; goal <= 5 ms): ${moreMs <= 5 ? 'within goal' : 'OVER GOAL'}`,
  );
  console.log(
    `stream, pieces per second (one written a ms, ${replyPieces} a reply): through the local server ${runvilRate.toFixed(0)} | straight ${straightRate.toFixed(0)} | the server's writing ${serverRate.toFixed(0)} | ${rateRatio.toFixed(3)}x the server's rate (goal >= 0.95x): ${rateRatio >= 0.95 ? 'within goal' : 'UNDER GOAL'}`,
  );
  return {
    stream_first_delta_runvil_ms: +median(first.runvil).toFixed(2),
    stream_first_delta_straight_ms: +median(first.straight).toFixed(2),
    stream_first_delta_more_ms: +moreMs.toFixed(2),
    stream_rate_runvil_per_s: Math.round(runvilRate),
    stream_rate_server_per_s: Math.round(serverRate),
    stream_rate_ratio: +rateRatio.toFixed(3),
  };
}
