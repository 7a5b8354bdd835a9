/**
 * Workers AI's stream (the binding's `stream: true`): `data:` chunks of `{ response }` text
 * pieces, a last chunk with `usage` (and, for models that call tools, `tool_calls`, whole
 * as `{ name, arguments }` or in pieces as OpenAI's), then `data: [DONE]`. Models served in
 * the OpenAI-compatible shape stream Chat Completions chunks instead (`choices[].delta`):
 * those go to the Chat Completions parser, as the non-streaming reader reads both shapes.
 */
import type { ModelReply } from '../provider.ts';
import { isRecord, tokenUsage, withIds } from '../wire-values.ts';
import { OpenAiStream } from './openai-stream.ts';
import { chunkObject, isFailure, pieceIndex, ToolCallPieces, type ReplyStream, type StreamEvent, type StreamFailure } from './reply-stream.ts';

/** A parser of one Workers AI stream. */
export function workersAiStream(): ReplyStream {
  return new WorkersAiStream();
}

class WorkersAiStream implements ReplyStream {
  ended = false;
  private content = '';
  private readonly calls = new ToolCallPieces();
  private usage: Record<string, unknown> = {};
  /** Set by the first chunk in the Chat Completions shape. */
  private chat: OpenAiStream | null = null;

  take(event: StreamEvent): string | StreamFailure {
    if (event.data.trim() === '[DONE]') {
      this.ended = true;
      return '';
    }
    const chunk = chunkObject(event.data);
    if (isFailure(chunk)) return chunk;
    if (chunk.choices !== undefined || this.chat) return (this.chat ??= new OpenAiStream()).takeChunk(chunk, event.data);
    if (chunk.error !== undefined || chunk.errors !== undefined) return { failure: 'the stream reported an error', detail: event.data };
    if (isRecord(chunk.usage)) this.usage = chunk.usage;
    if (Array.isArray(chunk.tool_calls)) {
      const before = this.calls.size;
      (chunk.tool_calls as unknown[]).forEach((call, position) => {
        if (!isRecord(call)) return;
        const index = pieceIndex(call, before + position);
        if (isRecord(call.function)) this.calls.add(index, { id: call.id, name: call.function.name, arguments: call.function.arguments });
        else this.calls.add(index, { id: call.id, name: call.name, arguments: call.arguments });
      });
    }
    const text = typeof chunk.response === 'string' ? chunk.response : '';
    this.content += text;
    return text;
  }

  reply(): ModelReply | StreamFailure {
    if (this.chat) {
      const reply = this.chat.reply();
      return isFailure(reply) ? reply : { ...reply, tool_calls: withIds(reply.tool_calls) };
    }
    const calls = this.calls.done();
    if (isFailure(calls)) return calls;
    return { content: this.content, tool_calls: withIds(calls), ...tokenUsage(this.usage.prompt_tokens, this.usage.completion_tokens) };
  }
}
