/**
 * The three providers over a streaming loopback server, for the stream tests: each wire's
 * recorded streams and whole answers by name, a round's request, and a round run with its
 * deltas collected.
 */
import { anthropicProvider } from '../../src/models/anthropic.ts';
import type { RoundOptions } from '../../src/models/http-round.ts';
import { openAiProvider } from '../../src/models/openai.ts';
import type { ModelOutcome, ModelProvider, ModelRequest, ReplyDelta } from '../../src/models/provider.ts';
import { workersAiProvider } from '../../src/models/workers-ai.ts';
import { fastRounds } from './helpers.ts';

/** The wires a provider streams. */
export const WIRES = ['openai', 'anthropic', 'workers-ai'] as const;
export type Wire = (typeof WIRES)[number];

/** A round of one user message and no tools. */
export const REQUEST: ModelRequest = { role: 'writer', config: { model: 'm-test' }, messages: [{ role: 'user', content: 'Go.' }], tools: null };

/**
 * The provider of `wire` against the server at `url`. Workers AI's binding is played by a
 * fetch of the same server, whose body is the stream the binding would hand back.
 */
export function providerFor(wire: Wire, url: string, rounds: RoundOptions = fastRounds()): ModelProvider {
  if (wire === 'openai') return openAiProvider({ baseUrl: url, round: rounds });
  if (wire === 'anthropic') return anthropicProvider({ baseUrl: url, round: rounds });
  return workersAiProvider({
    binding: {
      async run(_model, inputs) {
        const response = await fetch(`${url}/ai/run`, { method: 'POST', body: JSON.stringify(inputs) });
        if (inputs.stream === true) return response.body;
        return JSON.parse(await response.text()) as unknown;
      },
    },
    ...(rounds.timeoutMs !== undefined ? { timeoutMs: rounds.timeoutMs } : {}),
    ...(rounds.idleMs !== undefined ? { idleMs: rounds.idleMs } : {}),
    ...(rounds.maxStreamBytes !== undefined ? { maxStreamBytes: rounds.maxStreamBytes } : {}),
  });
}

/** A streamed round's outcome and every delta it reported, in order. */
export async function streamedRound(
  provider: ModelProvider,
  options: { signal?: AbortSignal; onDelta?: (delta: ReplyDelta) => void } = {},
): Promise<{ outcome: ModelOutcome; deltas: ReplyDelta[] }> {
  const deltas: ReplyDelta[] = [];
  const outcome = await provider.round(REQUEST, options.signal, (delta) => {
    deltas.push(delta);
    options.onDelta?.(delta);
  });
  return { outcome, deltas };
}

/** The text of the deltas since the last restart: what the reply's content must be. */
export function textSinceRestart(deltas: readonly ReplyDelta[]): string {
  let text = '';
  for (const delta of deltas) text = delta.restart ? '' : text + delta.text;
  return text;
}

/** A promise and its resolver. */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
