/**
 * A streamed reply as one wire's parser builds it: each server-sent event goes in, the text it
 * adds comes out at once, and the reply, the same as the wire's non-streaming answer reads,
 * once the stream has ended. One parser per wire (openai-stream.ts, anthropic-stream.ts,
 * workers-ai-stream.ts); reading the bytes, the bounds and the retries are sse-read.ts's and
 * stream-round.ts's.
 */
import type { Json } from '../../json/json.ts';
import type { ModelReply, ToolCall } from '../provider.ts';

/** One server-sent event: its `event:` name when it has one, and its `data:` text. */
export interface StreamEvent {
  event?: string | undefined;
  data: string;
}

/** Why a stream cannot make a reply: what went wrong, and the text it quotes. */
export interface StreamFailure {
  failure: string;
  detail?: string;
}

/** A wire's parser of one streamed reply. */
export interface ReplyStream {
  /** Takes one event: the text it adds to the reply ('' for none), or why the stream fails. */
  take(event: StreamEvent): string | StreamFailure;
  /** Whether the wire's own end mark has arrived: a stream that stops before it was cut. */
  readonly ended: boolean;
  /** The reply, once the stream has ended. */
  reply(): ModelReply | StreamFailure;
}

/** Whether a parser's answer is a failure. */
export function isFailure(value: unknown): value is StreamFailure {
  return typeof value === 'object' && value !== null && 'failure' in value;
}

/** The data of an event as a JSON object, or the failure of a malformed chunk. */
export function chunkObject(data: string): Record<string, unknown> | StreamFailure {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { failure: 'the stream sent a chunk that is not JSON', detail: data };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { failure: 'the stream sent a chunk that is not a JSON object', detail: data };
  return parsed as Record<string, unknown>;
}

/**
 * Tool calls whose parts arrive in pieces, each naming its call by index (OpenAI's
 * `tool_calls[].index`, Anthropic's content block index): the id and name once, the
 * arguments' JSON text in pieces, calls interleaved. Calls read in index order.
 */
export class ToolCallPieces {
  private readonly calls = new Map<number, { id: string; name: string; text: string; whole: Json | undefined }>();

  /** Adds what one piece says of call `index`. */
  add(index: number, piece: { id?: unknown; name?: unknown; arguments?: unknown }): void {
    let call = this.calls.get(index);
    if (!call) this.calls.set(index, (call = { id: '', name: '', text: '', whole: undefined }));
    if (typeof piece.id === 'string' && piece.id !== '') call.id = piece.id;
    if (typeof piece.name === 'string' && piece.name !== '') call.name = piece.name;
    if (typeof piece.arguments === 'string') call.text += piece.arguments;
    // A server that sends a call whole may send its arguments as an object.
    else if (piece.arguments !== undefined && piece.arguments !== null) call.whole = piece.arguments as Json;
  }

  /** How many calls have arrived. */
  get size(): number {
    return this.calls.size;
  }

  /**
   * The calls with their arguments parsed: blank text is `{}`, as the non-streaming readers
   * take it; text that is not JSON once the stream has ended fails the reply.
   */
  done(): ToolCall[] | StreamFailure {
    const out: ToolCall[] = [];
    for (const index of [...this.calls.keys()].sort((a, b) => a - b)) {
      const call = this.calls.get(index)!;
      let args: Json = call.whole ?? {};
      if (call.text.trim() !== '') {
        try {
          args = JSON.parse(call.text) as Json;
        } catch {
          const name = call.name === '' ? `at index ${index}` : JSON.stringify(call.name);
          return { failure: `the arguments of tool call ${name} are not JSON at the end of the stream`, detail: call.text };
        }
      }
      out.push({ id: call.id, name: call.name, arguments: args });
    }
    return out;
  }
}

/** A piece's place among a reply's calls: its index, else its place in the chunk. */
export function pieceIndex(piece: Record<string, unknown>, position: number): number {
  return typeof piece.index === 'number' && Number.isInteger(piece.index) && piece.index >= 0 ? piece.index : position;
}
