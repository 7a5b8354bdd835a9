/**
 * What the streaming tests share: the prompts whose model steps stream (their roles name
 * `provider: openai`, which the test Worker serves with app/stream-model.ts), and a reader of
 * server-sent events that keeps each message's `id:` (deltas have none).
 */

const lua = (code: string) => '```lua\n' + code + '\n```\n';

/** One streamed model step; with `ask`, then an ask, the reply and the answer as the result. */
export const STREAMER = `---
name: streamer
description: One streamed model step, then maybe an ask.
runvil: 0
uses: [user-input]
models:
  writer: { provider: openai }
args:
  topic: { type: string, default: tides }
  ask: { type: boolean, default: false }
---
# Streamer

## Write
${lua(`local text = models.get('writer'):infer('Write about ' .. args.topic)
if args.ask then
  local answer = tools.call('user-input/ask', { question = 'Keep it?' })
  return text .. ' / ' .. answer
end
return text`)}`;

/** Two tasks, each with a streamed model step of its own. */
export const TWINS = `---
name: twins
description: Two tasks stream at once.
runvil: 0
models:
  writer: { provider: openai }
---
# Twins

## Main
${lua(`local a = tasks.spawn('## Write', { topic = 'left' })
local b = tasks.spawn('## Write', { topic = 'right' })
return tasks.await(a) .. ' | ' .. tasks.await(b)`)}
## Write
${lua(`local input = ...
return models.get('writer'):infer('Write about ' .. input.topic)`)}`;

/** One server-sent message: its `id:` (none for a delta or the closing run_pending) and its data. */
export interface SseMessage {
  id?: string;
  data: { type: string; [field: string]: unknown };
}

/** A reader of one response's server-sent messages. */
export interface SseReader {
  /** The next message `match` takes; those read on the way are kept in `before`. */
  next(match: (message: SseMessage) => boolean): Promise<SseMessage>;
  /** Messages read while looking for another (`next`). */
  readonly before: SseMessage[];
  /** Every message up to the stream's end. */
  rest(): Promise<SseMessage[]>;
  /** Every message up to and with the first `match` takes; then the reading stops. */
  until(match: (message: SseMessage) => boolean): Promise<SseMessage[]>;
  /** The last `id:` read. */
  lastId(): string | undefined;
  /** Closes the connection, as a client going away does. */
  cancel(): Promise<void>;
}

/** Reads `response`'s body as server-sent messages. */
export function readSse(response: Response): SseReader {
  if (!response.ok || !response.body) throw new Error(`expected an event stream, got ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const queued: SseMessage[] = [];
  const before: SseMessage[] = [];
  let buffer = '';
  let ended = false;
  let last: string | undefined;
  const read = async (): Promise<SseMessage | null> => {
    for (;;) {
      if (queued.length > 0) return queued.shift()!;
      if (ended) return null;
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        continue;
      }
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data === undefined) continue;
        if (id !== undefined) last = id;
        queued.push({ ...(id !== undefined ? { id } : {}), data: JSON.parse(data) as SseMessage['data'] });
      }
    }
  };
  return {
    before,
    async next(match) {
      for (;;) {
        const message = await read();
        if (message === null) throw new Error(`the stream ended first; read: ${JSON.stringify(before.map((m) => m.data.type))}`);
        if (match(message)) return message;
        before.push(message);
      }
    },
    async rest() {
      const out: SseMessage[] = [];
      for (let message = await read(); message !== null; message = await read()) out.push(message);
      return out;
    },
    async until(match) {
      const out: SseMessage[] = [];
      for (let message = await read(); message !== null; message = await read()) {
        out.push(message);
        if (match(message)) break;
      }
      await reader.cancel();
      return out;
    },
    lastId: () => last,
    cancel: () => reader.cancel(),
  };
}
