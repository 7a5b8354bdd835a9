/**
 * Model providers behind one interface: the scripted provider of tests, and the real
 * OpenAI-compatible, Anthropic and Workers AI providers.
 */
import type { ModelConfig } from '../prompt/types.ts';
import type { Json } from '../json/json.ts';

/** Chooses the provider for a role's model config; a string is why there is none. */
export interface ModelDirectory {
  provider(config: ModelConfig, role: string): ModelProvider | string;
}

/** One record of a conversation. */
export interface MessageRecord {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

/** A tool call the model asks for. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: Json;
}

/** A tool as a model round advertises it. */
export interface WireTool {
  name: string;
  description: string;
  parameters: Json;
}

/** One model round. `tools` is null when the round advertises no tools at all. */
export interface ModelRequest {
  role: string;
  config: ModelConfig;
  messages: MessageRecord[];
  tools: WireTool[] | null;
}

/** A model's reply: text, tool calls, or both; usage when the provider reports it. */
export interface ModelReply {
  content: string;
  tool_calls: ToolCall[];
  usage?: { input_tokens: number; output_tokens: number };
}

/** A round's outcome: a reply, or a Model-kind failure. */
export type ModelOutcome = { ok: true; reply: ModelReply } | { ok: false; message: string };

/**
 * What a streamed round reports as its reply arrives: a piece of its text, in order. A round
 * sent again after part of its text had arrived (the round's retry, after a stream cut in
 * the middle) first reports `{ text: '', restart: true }`: the text reported so far for this
 * round is void, and what follows is the new attempt's text from its start. The text of a
 * round's pieces since its last restart is the reply's `content`.
 */
export interface ReplyDelta {
  text: string;
  restart?: true;
}

/** Told each piece of a streamed round's text as it arrives (see ReplyDelta). */
export type DeltaListener = (delta: ReplyDelta) => void;

/** Talks to one kind of model. */
export interface ModelProvider {
  /**
   * Sends one round. With `onDelta`, a provider that can stream asks for the reply as a stream
   * and reports its text as it arrives; the outcome is the same reply either way.
   */
  round(request: ModelRequest, signal?: AbortSignal, onDelta?: DeltaListener): Promise<ModelOutcome>;
}
