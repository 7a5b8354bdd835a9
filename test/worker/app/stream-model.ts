/**
 * A model that streams, for the workerd tests of model_delta: the real `openai` provider (its
 * stream parser, bounds and retries) over a transport that answers each round with a
 * Chat Completions stream this module writes: the bytes come from a ReadableStream, as a
 * server's would. Ungated, a round streams its reply at once in pieces (`echo: <last message>`,
 * word by word); gated, each round waits for the test, which sends its pieces one by one
 * (`nextTurn()`), ends it, or sees the provider close it (a cancelled run).
 *
 * The stream lives in the run object's context, and workerd forbids touching it from the
 * test's: the test only writes plain values (`pieces`, `ended`) that the stream reads, and
 * reads the flags the stream sets, each side polling, as armFault does.
 */
import type { ModelProvider } from '../../../src/models/provider.ts';
import { openAiProvider } from '../../../src/models/openai.ts';

const encoder = new TextEncoder();
const tick = (ms = 1) => new Promise((resolve) => setTimeout(resolve, ms));

/** One round as the stream's server sees it. */
export interface StreamTurn {
  /** The request body the provider sent. */
  body: { messages: { role: string; content: string | null }[]; stream?: boolean };
  /** Pieces of the reply's text the stream has yet to send. */
  pieces: string[];
  /** True once the test ended the reply (the stream sends the usage, then [DONE]). */
  ended: boolean;
  /** True once the provider closed the stream before its end (a cancel, a bound). */
  wasClosed: boolean;
  /** How many pieces the stream has sent. */
  sent: number;
}

/** The streaming model's state, shared by the isolate's run objects and the tests. */
export const streamModel: { gated: boolean; turns: StreamTurn[]; rounds: number } = { gated: false, turns: [], rounds: 0 };

/** Puts the model back as a fresh isolate has it. */
export function resetStreamModel(): void {
  streamModel.gated = false;
  streamModel.turns.splice(0);
  streamModel.rounds = 0;
}

/** The next gated round the test has not taken yet. */
export async function nextTurn(): Promise<StreamTurn> {
  for (let i = 0; i < 5000; i++) {
    const turn = streamModel.turns.shift();
    if (turn) return turn;
    await tick(2);
  }
  throw new Error('no model round came');
}

/** Sends pieces of a gated round's reply; settles once the stream has sent them. */
export async function send(turn: StreamTurn, ...pieces: string[]): Promise<void> {
  turn.pieces.push(...pieces);
  const target = turn.sent + turn.pieces.length;
  await untilTrue(() => turn.sent >= target || turn.wasClosed);
}

/** Ends a gated round's reply. */
export function end(turn: StreamTurn): void {
  turn.ended = true;
}

/** Settles once `check` holds (polling; 10 s at most). */
export async function untilTrue(check: () => boolean): Promise<void> {
  for (let i = 0; i < 5000; i++) {
    if (check()) return;
    await tick(2);
  }
  throw new Error('never came true');
}

/** The words of `echo: <text>` as pieces, each space kept with the word after it. */
export function echoPieces(last: string): string[] {
  return `echo: ${last}`.split(/(?= )/);
}

const chunk = (value: Record<string, unknown>) => encoder.encode(`data: ${JSON.stringify({ object: 'chat.completion.chunk', ...value })}\n\n`);

/** A transport answering each round with a stream of this module's writing. */
const transport: typeof fetch = async (_input, init) => {
  streamModel.rounds++;
  const body = JSON.parse(String(init?.body)) as StreamTurn['body'];
  const turn: StreamTurn = { body, pieces: [], ended: false, wasClosed: false, sent: 0 };
  if (streamModel.gated) streamModel.turns.push(turn);
  else {
    turn.pieces.push(...echoPieces(body.messages.at(-1)?.content ?? ''));
    turn.ended = true;
  }
  let done = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }));
    },
    async pull(controller) {
      while (turn.pieces.length === 0 && !turn.ended && !turn.wasClosed) await tick();
      if (turn.wasClosed) return;
      const piece = turn.pieces.shift();
      if (piece !== undefined) {
        controller.enqueue(chunk({ choices: [{ index: 0, delta: { content: piece } }] }));
        turn.sent++;
        return;
      }
      done = true;
      controller.enqueue(chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: turn.sent } }));
      controller.enqueue(encoder.encode('data: [DONE]\n\n'));
      controller.close();
    },
    cancel() {
      if (!done) turn.wasClosed = true;
    },
  });
  init?.signal?.addEventListener('abort', () => {
    if (!done) turn.wasClosed = true;
  });
  return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
};

/** The streaming model: a prompt's role with `provider: openai` is served by it in the test Worker. */
export const streamingProvider: ModelProvider = openAiProvider({
  baseUrl: 'https://stream-model.test/v1',
  round: { fetch: transport, retries: 0, backoffMs: () => 0 },
});

/**
 * A Workers AI binding that streams as the real one does with `stream: true` (a
 * ReadableStream of `data: {"response"}` chunks, the usage, `[DONE]`), read by the real
 * `workers-ai` provider: a role with `provider: workers-ai` is served by it. Its reply is
 * `echo: <last message>`, a word a chunk.
 */
export const streamingAiBinding = {
  async run(_model: string, inputs: Record<string, unknown>): Promise<unknown> {
    streamModel.rounds++;
    const messages = inputs.messages as { content: string }[];
    const pieces = echoPieces(messages.at(-1)?.content ?? '');
    if (inputs.stream !== true) return { response: pieces.join('') };
    return new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const piece of pieces) {
          controller.enqueue(encoder.encode(`data: ${JSON.stringify({ response: piece })}\n\n`));
          await tick();
        }
        controller.enqueue(encoder.encode(`data: ${JSON.stringify({ response: '', usage: { prompt_tokens: 3, completion_tokens: pieces.length } })}\n\n`));
        controller.enqueue(encoder.encode('data: [DONE]\n\n'));
        controller.close();
      },
    });
  },
};
