/**
 * The `anthropic` provider: the Messages API (`POST {base_url}/v1/messages`). The system
 * prompt travels apart from the messages, tool calls are `tool_use` blocks and tool
 * results `tool_result` blocks of one user message. A round with a delta listener is
 * streamed (stream/anthropic-stream.ts).
 */
import type { Json } from '../json/json.ts';
import { postJson, shapeFailure, type RoundOptions } from './http-round.ts';
import type { MessageRecord, ModelOutcome, ModelProvider, ModelRequest } from './provider.ts';
import { anthropicStream } from './stream/anthropic-stream.ts';
import { postStream } from './stream/stream-round.ts';
import { isRecord, originOf, sameOrigin, stringField, tokenUsage, trimBase } from './wire-values.ts';

/** Anthropic's API root, the default `base_url` (without `/v1`). */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** The model of a role that names none. */
export const ANTHROPIC_DEFAULT_MODEL = 'claude-haiku-4-5';

/** The `anthropic-version` header every request carries. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** The Messages API requires `max_tokens`; this is it when the role's config has none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** What an `anthropic` provider is built with. */
export interface AnthropicOptions {
  /** Sent as `x-api-key`, only to the origin of `baseUrl`. */
  apiKey?: string;
  /** The Host's API root (default ANTHROPIC_BASE_URL); a role's `base_url` overrides it. */
  baseUrl?: string;
  round?: RoundOptions;
}

/** A provider over the Messages API. */
export function anthropicProvider(options: AnthropicOptions = {}): ModelProvider {
  const hostBase = trimBase(options.baseUrl ?? ANTHROPIC_BASE_URL);
  const secrets = options.apiKey ? [options.apiKey] : [];
  return {
    async round(request, signal, onDelta) {
      const base = trimBase(request.config.base_url ?? hostBase);
      const model = request.config.model ?? ANTHROPIC_DEFAULT_MODEL;
      const keyGoes = options.apiKey !== undefined && sameOrigin(base, hostBase);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: onDelta ? 'text/event-stream' : 'application/json',
        'anthropic-version': ANTHROPIC_VERSION,
      };
      if (keyGoes) headers['x-api-key'] = options.apiKey!;
      const post = {
        provider: 'anthropic',
        model,
        url: `${base}/v1/messages`,
        headers,
        body: anthropicBody(request, model),
        secrets,
        ...(options.apiKey && !keyGoes ? { authHint: `ANTHROPIC_API_KEY is only sent to ${originOf(hostBase)}` } : {}),
      };
      if (onDelta) {
        const streamed = { ...post, body: { ...post.body, stream: true } };
        return postStream(streamed, { stream: anthropicStream, whole: (answer) => anthropicReply(answer, secrets) }, onDelta, options.round, signal);
      }
      const answer = await postJson(post, options.round, signal);
      if (!answer.ok) return answer;
      return anthropicReply(answer, secrets);
    },
  };
}

/** A Messages API reply: its text blocks joined, its `tool_use` blocks as calls, and the usage. */
export function anthropicReply(answer: { status: number; json: unknown; text: string }, secrets: readonly string[]): ModelOutcome {
  const content = isRecord(answer.json) ? answer.json.content : undefined;
  if (!Array.isArray(content) || content.length === 0) return shapeFailure('anthropic', 'the reply has no content blocks', answer, secrets);
  const blocks = content.filter(isRecord);
  const usage = isRecord(answer.json) && isRecord(answer.json.usage) ? answer.json.usage : {};
  return {
    ok: true,
    reply: {
      content: blocks
        .filter((block) => block.type === 'text')
        .map((block) => stringField(block, 'text'))
        .join(''),
      tool_calls: blocks
        .filter((block) => block.type === 'tool_use')
        .map((block) => ({ id: stringField(block, 'id'), name: stringField(block, 'name'), arguments: (block.input ?? {}) as Json })),
      ...tokenUsage(usage.input_tokens, usage.output_tokens),
    },
  };
}

/** The request body of one round. */
export function anthropicBody(request: ModelRequest, model: string): Record<string, unknown> {
  const { config, tools } = request;
  const { system, messages } = anthropicMessages(request.messages);
  return {
    model,
    max_tokens: config.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    ...(system !== '' ? { system } : {}),
    messages,
    ...(tools && tools.length > 0 ? { tools: tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters })) } : {}),
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
  };
}

/** The system records joined apart, and the rest as Messages API messages. */
export function anthropicMessages(records: readonly MessageRecord[]): { system: string; messages: Record<string, Json>[] } {
  const system: string[] = [];
  const messages: Record<string, Json>[] = [];
  // The results of one batch of calls answer together, in call order, in one user message.
  let results: Json[] | null = null;
  for (const record of records) {
    if (record.role === 'tool') {
      const block = { type: 'tool_result', tool_use_id: record.tool_call_id ?? '', content: record.content };
      if (results) results.push(block);
      else messages.push({ role: 'user', content: (results = [block]) });
      continue;
    }
    results = null;
    if (record.role === 'system') system.push(record.content);
    else if (record.role === 'assistant' && record.tool_calls && record.tool_calls.length > 0) {
      messages.push({
        role: 'assistant',
        content: [
          ...(record.content !== '' ? [{ type: 'text', text: record.content }] : []),
          ...record.tool_calls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments) })),
        ],
      });
    } else messages.push({ role: record.role, content: record.content });
  }
  return { system: system.join('\n\n'), messages };
}

/** A call's arguments as a `tool_use` input object; Lua can hand back `{}` as an empty array. */
function toolInput(value: Json): Json {
  return isRecord(value) ? value : {};
}
