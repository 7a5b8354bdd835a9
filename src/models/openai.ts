/**
 * The `openai` provider: the Chat Completions wire format (`POST {base_url}/chat/completions`),
 * which OpenAI, Workers AI's OpenAI-compatible endpoint, vLLM, Ollama, OpenRouter and other
 * compatible servers speak. A round with a delta listener is streamed (stream/openai-stream.ts).
 */
import type { Json } from '../json/json.ts';
import { postJson, shapeFailure, type RoundOptions } from './http-round.ts';
import type { MessageRecord, ModelOutcome, ModelProvider, ModelReply, ModelRequest } from './provider.ts';
import { openAiStream } from './stream/openai-stream.ts';
import { postStream } from './stream/stream-round.ts';
import { argumentsText, isRecord, originOf, sameOrigin, stringField, tokenUsage, toolArguments, trimBase } from './wire-values.ts';

/** OpenAI's API root, the default `base_url`. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** The model of a role that names none. */
export const OPENAI_DEFAULT_MODEL = 'gpt-4o-mini';

/** What an `openai` provider is built with. */
export interface OpenAiOptions {
  /** Sent as `Authorization: Bearer`, only to the origin of `baseUrl`. */
  apiKey?: string;
  /** The Host's API root (default OPENAI_BASE_URL); a role's `base_url` overrides it. */
  baseUrl?: string;
  round?: RoundOptions;
}

/** A provider over the Chat Completions API. */
export function openAiProvider(options: OpenAiOptions = {}): ModelProvider {
  const hostBase = trimBase(options.baseUrl ?? OPENAI_BASE_URL);
  const secrets = options.apiKey ? [options.apiKey] : [];
  return {
    async round(request, signal, onDelta) {
      const base = trimBase(request.config.base_url ?? hostBase);
      const model = request.config.model ?? OPENAI_DEFAULT_MODEL;
      // A prompt chooses its base_url; the Host's key only goes where the Host's environment points.
      const keyGoes = options.apiKey !== undefined && sameOrigin(base, hostBase);
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: onDelta ? 'text/event-stream' : 'application/json' };
      if (keyGoes) headers.authorization = `Bearer ${options.apiKey}`;
      const post = {
        provider: 'openai',
        model,
        url: `${base}/chat/completions`,
        headers,
        body: openAiBody(request, model),
        secrets,
        ...(options.apiKey && !keyGoes ? { authHint: `OPENAI_API_KEY is only sent to ${originOf(hostBase)}` } : {}),
      };
      if (onDelta) {
        const streamed = { ...post, body: { ...post.body, stream: true, stream_options: { include_usage: true } } };
        return postStream(streamed, { stream: openAiStream, whole: (answer) => openAiReply('openai', answer, secrets) }, onDelta, options.round, signal);
      }
      const answer = await postJson(post, options.round, signal);
      if (!answer.ok) return answer;
      return openAiReply('openai', answer, secrets);
    },
  };
}

/** The request body of one round. */
export function openAiBody(request: ModelRequest, model: string): Record<string, unknown> {
  const { config, tools } = request;
  return {
    model,
    messages: openAiMessages(request.messages),
    ...(tools && tools.length > 0
      ? { tools: tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } })) }
      : {}),
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
    ...(config.max_tokens !== undefined ? { max_tokens: config.max_tokens } : {}),
  };
}

/** The conversation as Chat Completions messages. */
export function openAiMessages(records: readonly MessageRecord[]): Record<string, Json>[] {
  return records.map((record): Record<string, Json> => {
    if (record.role === 'tool') return { role: 'tool', tool_call_id: record.tool_call_id ?? '', content: record.content };
    if (record.role === 'assistant' && record.tool_calls && record.tool_calls.length > 0) {
      return {
        role: 'assistant',
        content: record.content === '' ? null : record.content,
        tool_calls: record.tool_calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: argumentsText(call.arguments) },
        })),
      };
    }
    return { role: record.role, content: record.content };
  });
}

/** A Chat Completions reply: `choices[0].message`, and the usage. */
export function openAiReply(provider: string, answer: { status: number; json: unknown; text: string }, secrets: readonly string[]): ModelOutcome {
  const { json } = answer;
  const choices = isRecord(json) ? json.choices : undefined;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const message = isRecord(first) ? first.message : undefined;
  if (!isRecord(message)) return shapeFailure(provider, 'the reply has no choices', answer, secrets);
  const usage = isRecord(json) && isRecord(json.usage) ? json.usage : {};
  return { ok: true, reply: { ...openAiMessageReply(message), ...tokenUsage(usage.prompt_tokens, usage.completion_tokens) } };
}

/** An assistant message of the Chat Completions format as a reply (without usage). */
export function openAiMessageReply(message: Record<string, unknown>): ModelReply {
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
  return {
    content: contentText(message.content),
    tool_calls: calls.map((call) => {
      const fn = isRecord(call) ? call.function : undefined;
      return { id: stringField(call, 'id'), name: stringField(fn, 'name'), arguments: toolArguments(isRecord(fn) ? fn.arguments : undefined) };
    }),
  };
}

/** Content as text: a string, null, or (some servers) a list of `{ type: 'text', text }` parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) && part.type === 'text' ? stringField(part, 'text') : '')).join('');
}
