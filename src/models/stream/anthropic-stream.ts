/**
 * The Messages API stream (`stream: true`): `message_start` (the usage's input tokens), then
 * per content block `content_block_start`, `content_block_delta`s (`text_delta` pieces of a
 * text block, `input_json_delta` pieces of a `tool_use` block's input JSON) and
 * `content_block_stop`, then `message_delta` (the usage's output tokens, cumulative) and
 * `message_stop`; `ping`s anywhere, and `error` when the API fails mid-stream. Event types
 * the API adds later, and delta types other than these two (thinking), are passed over, as
 * the non-streaming reader passes over blocks other than `text` and `tool_use`.
 */
import type { Json } from '../../json/json.ts';
import type { ModelReply } from '../provider.ts';
import { isRecord, stringField, tokenUsage } from '../wire-values.ts';
import { chunkObject, isFailure, ToolCallPieces, type ReplyStream, type StreamEvent, type StreamFailure } from './reply-stream.ts';

/** A parser of one Messages API stream. */
export function anthropicStream(): ReplyStream {
  return new AnthropicStream();
}

class AnthropicStream implements ReplyStream {
  ended = false;
  /** Each block's type by its index; the text of text blocks; tool_use blocks as call pieces. */
  private readonly blocks = new Map<number, string>();
  private readonly texts = new Map<number, string>();
  private readonly calls = new ToolCallPieces();
  private inputTokens: unknown;
  private outputTokens: unknown;

  take(event: StreamEvent): string | StreamFailure {
    const chunk = chunkObject(event.data);
    if (isFailure(chunk)) return chunk;
    const type = typeof chunk.type === 'string' ? chunk.type : event.event;
    switch (type) {
      case 'message_start': {
        const usage = isRecord(chunk.message) && isRecord(chunk.message.usage) ? chunk.message.usage : {};
        this.inputTokens = usage.input_tokens;
        this.outputTokens = usage.output_tokens;
        return '';
      }
      case 'content_block_start':
        return this.start(chunk, event.data);
      case 'content_block_delta':
        return this.delta(chunk, event.data);
      case 'message_delta': {
        const usage = isRecord(chunk.usage) ? chunk.usage : {};
        if (usage.output_tokens !== undefined) this.outputTokens = usage.output_tokens;
        if (usage.input_tokens !== undefined && usage.input_tokens !== null) this.inputTokens = usage.input_tokens;
        return '';
      }
      case 'message_stop':
        this.ended = true;
        return '';
      case 'error':
        return { failure: 'the stream reported an error', detail: JSON.stringify(chunk.error ?? chunk) };
      default:
        return '';
    }
  }

  private start(chunk: Record<string, unknown>, data: string): string | StreamFailure {
    const index = blockIndex(chunk);
    const block = chunk.content_block;
    if (index === null || !isRecord(block)) return { failure: 'the stream sent a content block without an index or a block', detail: data };
    const type = stringField(block, 'type');
    this.blocks.set(index, type);
    if (type === 'text') {
      const text = stringField(block, 'text');
      this.texts.set(index, text);
      return text;
    }
    if (type === 'tool_use') {
      // The input is `{}` at the start and arrives in pieces; a server may send it whole.
      const input = isRecord(block.input) && Object.keys(block.input).length > 0 ? (block.input as Json) : undefined;
      this.calls.add(index, { id: block.id, name: block.name, ...(input ? { arguments: input } : {}) });
    }
    return '';
  }

  private delta(chunk: Record<string, unknown>, data: string): string | StreamFailure {
    const index = blockIndex(chunk);
    const delta = chunk.delta;
    if (index === null || !isRecord(delta)) return { failure: 'the stream sent a delta without an index or a delta', detail: data };
    const type = this.blocks.get(index);
    if (type === undefined) return { failure: `the stream sent a delta of block ${index}, which never started`, detail: data };
    if (delta.type === 'text_delta' && type === 'text') {
      const text = stringField(delta, 'text');
      this.texts.set(index, this.texts.get(index)! + text);
      return text;
    }
    if (delta.type === 'input_json_delta' && type === 'tool_use') this.calls.add(index, { arguments: stringField(delta, 'partial_json') });
    return '';
  }

  reply(): ModelReply | StreamFailure {
    if (this.blocks.size === 0) return { failure: 'the reply has no content blocks', detail: '' };
    const calls = this.calls.done();
    if (isFailure(calls)) return calls;
    const content = [...this.texts.keys()]
      .sort((a, b) => a - b)
      .map((index) => this.texts.get(index)!)
      .join('');
    return { content, tool_calls: calls, ...tokenUsage(this.inputTokens, this.outputTokens) };
  }
}

function blockIndex(chunk: Record<string, unknown>): number | null {
  return typeof chunk.index === 'number' && Number.isInteger(chunk.index) && chunk.index >= 0 ? chunk.index : null;
}
