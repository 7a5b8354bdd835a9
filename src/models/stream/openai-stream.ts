/**
 * The Chat Completions stream (`stream: true`, `stream_options: { include_usage: true }`):
 * `data:` chunks of `chat.completion.chunk`, each with `choices[].delta` (content pieces, tool
 * calls in pieces by `index`: id and name first, then the arguments' JSON text), the usage in
 * a last chunk whose `choices` is empty, then `data: [DONE]`. Only choice 0 is read, as the
 * non-streaming reader reads `choices[0]`.
 */
import type { ModelReply } from '../provider.ts';
import { isRecord, tokenUsage } from '../wire-values.ts';
import { chunkObject, isFailure, pieceIndex, ToolCallPieces, type ReplyStream, type StreamEvent, type StreamFailure } from './reply-stream.ts';

/** A parser of one Chat Completions stream. */
export function openAiStream(): OpenAiStream {
  return new OpenAiStream();
}

/** The chunks read so far: the content, the calls' pieces, the usage. */
export class OpenAiStream implements ReplyStream {
  ended = false;
  private content = '';
  private readonly calls = new ToolCallPieces();
  private usage: Record<string, unknown> = {};
  private choices = 0;

  take(event: StreamEvent): string | StreamFailure {
    if (event.data.trim() === '[DONE]') {
      this.ended = true;
      return '';
    }
    const chunk = chunkObject(event.data);
    if (isFailure(chunk)) return chunk;
    return this.takeChunk(chunk, event.data);
  }

  /** One chunk already parsed (Workers AI's stream sends the same chunks). */
  takeChunk(chunk: Record<string, unknown>, data: string): string | StreamFailure {
    if (chunk.error !== undefined) return { failure: 'the stream reported an error', detail: JSON.stringify(chunk.error) ?? data };
    if (isRecord(chunk.usage)) this.usage = chunk.usage;
    if (chunk.choices === undefined) return '';
    if (!Array.isArray(chunk.choices)) return { failure: 'the stream sent a chunk whose choices are not a list', detail: data };
    let text = '';
    for (const choice of chunk.choices as unknown[]) {
      if (!isRecord(choice) || (choice.index !== undefined && choice.index !== 0)) continue;
      this.choices++;
      const delta = choice.delta;
      if (delta === undefined || delta === null) continue;
      if (!isRecord(delta)) return { failure: 'the stream sent a chunk whose delta is not an object', detail: data };
      if (typeof delta.content === 'string') text += delta.content;
      if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
        if (!Array.isArray(delta.tool_calls)) return { failure: 'the stream sent tool calls that are not a list', detail: data };
        (delta.tool_calls as unknown[]).forEach((piece, position) => {
          if (!isRecord(piece)) return;
          const fn = isRecord(piece.function) ? piece.function : {};
          this.calls.add(pieceIndex(piece, position), { id: piece.id, name: fn.name, arguments: fn.arguments });
        });
      }
    }
    this.content += text;
    return text;
  }

  reply(): ModelReply | StreamFailure {
    if (this.choices === 0) return { failure: 'the stream has no choices', detail: '' };
    const calls = this.calls.done();
    if (isFailure(calls)) return calls;
    return { content: this.content, tool_calls: calls, ...tokenUsage(this.usage.prompt_tokens, this.usage.completion_tokens) };
  }
}
