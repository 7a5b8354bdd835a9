/**
 * The `workers-ai` provider: the Workers `AI` binding (`env.AI.run(model, { messages, tools })`)
 * when the Engine runs in a Worker. Models answer `{ response, tool_calls: [{ name, arguments }] }`
 * (tool calls without ids) or the OpenAI-compatible `{ choices: [{ message }] }`. A round with a
 * delta listener asks for the binding's stream (stream/workers-ai-stream.ts); the binding
 * is not retried, streamed or not.
 */
import type { Json } from '../json/json.ts';
import { DEFAULT_TIMEOUT_MS, durationText, excerpt } from './http-round.ts';
import { openAiMessageReply } from './openai.ts';
import type { MessageRecord, ModelOutcome, ModelProvider, ModelRequest, ToolCall } from './provider.ts';
import { DEFAULT_IDLE_MS, DEFAULT_MAX_STREAM_BYTES, readReplyStream } from './stream/sse-read.ts';
import { workersAiStream } from './stream/workers-ai-stream.ts';
import { argumentsText, isRecord, tokenUsage, toolArguments, withIds } from './wire-values.ts';

/** The part of the Workers `Ai` binding a round uses (typed here so no workers-types global is needed). */
export interface AiBinding {
  run(model: string, inputs: Record<string, unknown>, options?: Record<string, unknown>): Promise<unknown>;
}

/** The model of a role that names none: a Workers AI model that supports tool calls. */
export const WORKERS_AI_DEFAULT_MODEL = '@cf/meta/llama-3.3-70b-instruct-fp8-fast';

/** What a `workers-ai` provider is built with. */
export interface WorkersAiOptions {
  binding: AiBinding;
  /** How long one round may take (default 60 s), a stream's reading included. */
  timeoutMs?: number;
  /** A streamed reply's longest silence between two chunks (default 30 s). */
  idleMs?: number;
  /** The most bytes a streamed reply may send (default 8 MiB): past it the stream is cancelled. */
  maxStreamBytes?: number;
}

const PROVIDER = 'workers-ai';

/** A provider over the Workers AI binding. */
export function workersAiProvider(options: WorkersAiOptions): ModelProvider {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    async round(request, signal, onDelta) {
      const model = request.config.model ?? WORKERS_AI_DEFAULT_MODEL;
      // The time limit covers the whole round, a stream's reading included.
      const timeout = AbortSignal.timeout(timeoutMs);
      const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let output: unknown;
      try {
        const inputs = workersAiInputs(request);
        output = await withTimeout(options.binding.run(model, onDelta ? { ...inputs, stream: true } : inputs), timeoutMs, signal);
      } catch (error) {
        if (error === TIMED_OUT) return fail(`no answer from model ${JSON.stringify(model)} within ${durationText(timeoutMs)}`);
        if (signal?.aborted) return fail('the round was cancelled');
        return fail(`the binding failed for model ${JSON.stringify(model)}`, error instanceof Error ? error.message : String(error));
      }
      if (!onDelta) return workersAiReply(output);
      if (!(output instanceof ReadableStream)) {
        // A model that answers at once: its text is one piece.
        const whole = workersAiReply(output);
        if (whole.ok && whole.reply.content !== '') onDelta({ text: whole.reply.content });
        return whole;
      }
      const bounds = { idleMs: options.idleMs ?? DEFAULT_IDLE_MS, maxBytes: options.maxStreamBytes ?? DEFAULT_MAX_STREAM_BYTES, signal: stop };
      const read = await readReplyStream(output as ReadableStream<Uint8Array>, workersAiStream(), bounds, (text) => onDelta({ text }));
      if (read.type === 'reply') return { ok: true, reply: read.reply };
      if (read.type === 'failed') return fail(read.failure, read.detail);
      if (signal?.aborted) return fail('the round was cancelled');
      return fail(`the stream of model ${JSON.stringify(model)} did not end within ${durationText(timeoutMs)}`);
    },
  };
}

/** The binding's inputs for one round: tools in the binding's `{ name, description, parameters }` form. */
export function workersAiInputs(request: ModelRequest): Record<string, unknown> {
  const { config, tools } = request;
  return {
    messages: workersAiMessages(request.messages),
    ...(tools && tools.length > 0 ? { tools: tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })) } : {}),
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
    ...(config.max_tokens !== undefined ? { max_tokens: config.max_tokens } : {}),
  };
}

/** The conversation as the binding's messages; a tool result also names its tool, for models that pair by name. */
function workersAiMessages(records: readonly MessageRecord[]): Record<string, Json>[] {
  const names = new Map<string, string>();
  return records.map((record): Record<string, Json> => {
    if (record.role === 'tool') {
      const name = names.get(record.tool_call_id ?? '');
      return { role: 'tool', content: record.content, tool_call_id: record.tool_call_id ?? '', ...(name !== undefined ? { name } : {}) };
    }
    if (record.role === 'assistant' && record.tool_calls && record.tool_calls.length > 0) {
      for (const call of record.tool_calls) names.set(call.id, call.name);
      return {
        role: 'assistant',
        content: record.content,
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

/** The binding's answer as a reply, in either of its shapes. */
export function workersAiReply(output: unknown): ModelOutcome {
  if (!isRecord(output)) return fail('the reply is not an object', JSON.stringify(output) ?? String(output));
  const usage = isRecord(output.usage) ? tokenUsage(output.usage.prompt_tokens, output.usage.completion_tokens) : {};
  if ('choices' in output) {
    const first: unknown = Array.isArray(output.choices) ? output.choices[0] : undefined;
    const message = isRecord(first) ? first.message : undefined;
    if (!isRecord(message)) return fail('the reply has no choices', JSON.stringify(output));
    const reply = openAiMessageReply(message);
    return { ok: true, reply: { ...reply, tool_calls: withIds(reply.tool_calls), ...usage } };
  }
  if (!('response' in output) && !('tool_calls' in output)) return fail('the reply has neither a response nor choices', JSON.stringify(output));
  const calls = Array.isArray(output.tool_calls) ? (output.tool_calls as unknown[]) : [];
  return {
    ok: true,
    reply: {
      content: responseText(output.response),
      tool_calls: withIds(calls.map(legacyCall)),
      ...usage,
    },
  };
}

/** A call as `{ name, arguments }` or as the OpenAI-compatible `{ id, function: { name, arguments } }`. */
function legacyCall(call: unknown): ToolCall {
  if (!isRecord(call)) return { id: '', name: '', arguments: {} };
  if (isRecord(call.function)) return openAiMessageReply({ tool_calls: [call] }).tool_calls[0]!;
  return { id: typeof call.id === 'string' ? call.id : '', name: typeof call.name === 'string' ? call.name : '', arguments: toolArguments(call.arguments) };
}

/** The `response` field as text (JSON mode answers an object). */
function responseText(response: unknown): string {
  if (typeof response === 'string') return response;
  if (response === undefined || response === null) return '';
  return JSON.stringify(response);
}

function fail(what: string, detail?: string): { ok: false; message: string } {
  return { ok: false, message: `${PROVIDER}: ${what} (no HTTP status)${detail === undefined ? '' : `: ${excerpt(detail, [])}`}` };
}

const TIMED_OUT = Symbol('timed out');

/** The binding takes no signal: the round stops waiting at the time limit or when the run is cancelled. */
function withTimeout<T>(work: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('cancelled'));
    const timer = setTimeout(() => finish(() => reject(TIMED_OUT)), ms);
    const onAbort = () => finish(() => reject(new Error('cancelled')));
    signal?.addEventListener('abort', onAbort, { once: true });
    function finish(settle: () => void) {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    }
    work.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
