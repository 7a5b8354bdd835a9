import { describe, expect, it } from 'vitest';
import { modelDirectory } from '../../src/models/directory.ts';
import { workersAiProvider, WORKERS_AI_DEFAULT_MODEL, type AiBinding } from '../../src/models/workers-ai.ts';
import { loopPrompt, runLoop, toolResult } from './helpers.ts';

/** A binding that answers from a list and records every run. */
function fakeAi(outputs: unknown[]) {
  const runs: { model: string; inputs: Record<string, unknown> }[] = [];
  let next = 0;
  const binding: AiBinding = {
    async run(model, inputs) {
      runs.push({ model, inputs: structuredClone(inputs) });
      const output = outputs[next++];
      if (output instanceof Error) throw output;
      return output;
    },
  };
  return { binding, runs };
}

const round = (provider: ReturnType<typeof workersAiProvider>) =>
  provider.round({ role: 'r', config: { model: '@cf/x' }, messages: [{ role: 'user', content: 'hi' }], tools: null });

describe('the workers-ai provider driving models.loop', () => {
  it('sends messages and tools to the binding and reads calls without ids as call_1, call_2, ...', async () => {
    const { binding, runs } = fakeAi([
      {
        response: null,
        tool_calls: [
          { name: 'grab', arguments: { value: 'x' } },
          { name: 'stats_count', arguments: { text: 'abc' } },
          { name: 'stats_broken', arguments: {} },
        ],
        usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
      },
      { response: 'done', tool_calls: [], usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 } },
    ]);
    const { outcome, calls } = await runLoop(
      loopPrompt('{ provider: workers-ai, model: "@cf/meta/test", temperature: 0.1 }'),
      modelDirectory({}, { ai: binding }),
    );
    expect(outcome).toMatchObject({ status: 'completed', result: 'done' });
    expect(calls.map((c) => c.tool)).toEqual(['stats/count', 'stats/broken']);
    expect(runs.map((r) => r.model)).toEqual(['@cf/meta/test', '@cf/meta/test']);
    expect(runs[0]!.inputs).toEqual({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Go.' },
      ],
      tools: [
        {
          name: 'stats_count',
          description: 'Count the letters of a text',
          parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
        { name: 'stats_broken', description: 'Always fails', parameters: { type: 'object', properties: {} } },
        { name: 'grab', description: 'Grab a value', parameters: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } },
      ],
      temperature: 0.1,
    });
    const fn = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });
    expect((runs[1]!.inputs as { messages: unknown[] }).messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: '',
        tool_calls: [fn('call_1', 'grab', '{"value":"x"}'), fn('call_2', 'stats_count', '{"text":"abc"}'), fn('call_3', 'stats_broken', '{}')],
      },
      { role: 'tool', content: 'grabbed x', tool_call_id: 'call_1', name: 'grab' },
      { role: 'tool', content: '3 letters', tool_call_id: 'call_2', name: 'stats_count' },
      { role: 'tool', content: toolResult(outcome, 'call_3'), tool_call_id: 'call_3', name: 'stats_broken' },
    ]);
    expect(outcome.events.filter((e) => e.type === 'model_turn_completed').map((e) => e.usage)).toEqual([
      { input_tokens: 7, output_tokens: 3 },
      { input_tokens: 9, output_tokens: 1 },
    ]);
  });
});

describe('one workers-ai round', () => {
  it('reads the OpenAI-compatible shape, keeping the ids it has', async () => {
    const { binding } = fakeAi([
      {
        choices: [
          {
            message: {
              content: 'hm',
              tool_calls: [
                { id: 'abc', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
                { type: 'function', function: { name: 'g', arguments: '{}' } },
              ],
            },
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 2 },
      },
    ]);
    expect(await round(workersAiProvider({ binding }))).toEqual({
      ok: true,
      reply: {
        content: 'hm',
        tool_calls: [
          { id: 'abc', name: 'f', arguments: { a: 1 } },
          { id: 'call_2', name: 'g', arguments: {} },
        ],
        usage: { input_tokens: 1, output_tokens: 2 },
      },
    });
  });

  it('reads OpenAI-style calls inside the { response, tool_calls } shape, and JSON text arguments', async () => {
    const { binding } = fakeAi([
      {
        response: '',
        tool_calls: [
          { id: 'z', type: 'function', function: { name: 'f', arguments: '{"q":2}' } },
          { name: 'g', arguments: '{"r":3}' },
        ],
      },
    ]);
    expect(await round(workersAiProvider({ binding }))).toEqual({
      ok: true,
      reply: {
        content: '',
        tool_calls: [
          { id: 'z', name: 'f', arguments: { q: 2 } },
          { id: 'call_2', name: 'g', arguments: { r: 3 } },
        ],
      },
    });
  });

  it('uses its default model when the role names none', async () => {
    const { binding, runs } = fakeAi([{ response: 'ok' }]);
    await workersAiProvider({ binding }).round({ role: 'r', config: {}, messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(runs).toEqual([{ model: WORKERS_AI_DEFAULT_MODEL, inputs: { messages: [{ role: 'user', content: 'hi' }] } }]);
  });

  it('fails the round with the binding error', async () => {
    const { binding } = fakeAi([new Error('AiError: 5007: No such model @cf/x')]);
    expect(await round(workersAiProvider({ binding }))).toEqual({
      ok: false,
      message: 'workers-ai: the binding failed for model "@cf/x" (no HTTP status): AiError: 5007: No such model @cf/x',
    });
  });

  it('fails a reply with neither a response nor choices, and one with no choices', async () => {
    const { binding } = fakeAi([{ result: 1 }, { choices: [] }]);
    const provider = workersAiProvider({ binding });
    expect(await round(provider)).toEqual({ ok: false, message: 'workers-ai: the reply has neither a response nor choices (no HTTP status): {"result":1}' });
    expect(await round(provider)).toEqual({ ok: false, message: 'workers-ai: the reply has no choices (no HTTP status): {"choices":[]}' });
  });

  it('stops waiting at its time limit', async () => {
    const binding: AiBinding = { run: () => new Promise(() => undefined) };
    expect(await round(workersAiProvider({ binding, timeoutMs: 20 }))).toEqual({
      ok: false,
      message: 'workers-ai: no answer from model "@cf/x" within 20 ms (no HTTP status)',
    });
  });
});
