import { afterEach, describe, expect, it } from 'vitest';
import { cliPlatform } from '../../src/cli/platform.ts';
import type { RunEvent } from '../../src/engine/events.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import type { ModelDelta } from '../../src/host/harness.ts';
import { runOnHost } from '../../src/host/host.ts';
import { StepTexts } from '../../src/host/step-texts.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import { modelDirectory } from '../../src/models/directory.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import { fastRounds, loopPrompt, statsPack } from './helpers.ts';
import { bytePieces, recorded, streamServer, type StreamServer } from './stream-server.ts';

const servers: StreamServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A server whose rounds answer, in turn, the recorded tool calls, then the recorded text: streamed or whole as asked. */
async function loopServer(wire: 'openai' | 'anthropic') {
  const rounds = ['tools', 'text'];
  const server = await streamServer((body, index) => {
    const kind = rounds[index % 2]!;
    return body.stream === true ? { pieces: bytePieces(recorded(`${wire}-${kind}.sse`), 9) } : recorded(`${wire}-${kind}.json`);
  });
  servers.push(server);
  return server;
}

/** Runs the loop prompt (stats_count and grab offered) on a Host whose `writer` speaks `wire` to `url`. */
async function run(wire: 'openai' | 'anthropic', url: string, options: { onModelDelta?: (delta: ModelDelta) => void; journal?: JournalEntry[] } = {}) {
  const parsed = parsePrompt(loopPrompt(`{ provider: ${wire}, model: m-test }`), 'loop.md');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const env = wire === 'openai' ? { OPENAI_BASE_URL: url } : { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-test' };
  const host = { packs: [statsPack([])], models: modelDirectory(env, {}, { round: fastRounds() }), operator: new ScriptedOperator([]) };
  const events: RunEvent[] = [];
  const outcome = await runOnHost(await cliPlatform(), host, {
    prompt: parsed.prompt,
    seed: 'stream',
    onEvent: (event) => events.push(event),
    ...(options.onModelDelta ? { onModelDelta: options.onModelDelta } : {}),
    ...(options.journal ? { journal: options.journal } : {}),
  });
  return { outcome, events };
}

describe('a model step streamed through the Host', () => {
  it.each(['openai', 'anthropic'] as const)(
    '%s: its deltas name the step and task, and the journal and events are those of a run that did not stream',
    async (wire) => {
      const deltas: ModelDelta[] = [];
      const streamed = await run(wire, (await loopServer(wire)).url, { onModelDelta: (delta) => deltas.push(delta) });
      const whole = await run(wire, (await loopServer(wire)).url);
      expect(streamed.outcome).toMatchObject({ status: 'completed', result: 'Hello, wörld — ☃ "quoted"\nand 🎉 done.' });
      expect(JSON.stringify(streamed.outcome.journal)).toBe(JSON.stringify(whole.outcome.journal));
      expect(streamed.events).toEqual(whole.events);
      expect(servers[0]!.bodies().every((body) => body.stream === true)).toBe(true);
      expect(servers[1]!.bodies().some((body) => body.stream !== undefined)).toBe(false);

      // Each round's deltas carry the seq of its model_turn_started event and make its model_turn_completed content.
      const starts = streamed.events.filter((event) => event.type === 'model_turn_started');
      const completions = streamed.events.filter((event) => event.type === 'model_turn_completed');
      expect(starts).toHaveLength(2);
      for (const [i, start] of starts.entries()) {
        const text = deltas
          .filter((delta) => delta.step === start.seq)
          .map((delta) => delta.text)
          .join('');
        expect(text).toBe(completions[i]!.content);
      }
      expect(deltas.every((delta) => delta.type === 'model_delta' && delta.task === '0' && starts.some((start) => start.seq === delta.step))).toBe(true);
    },
  );

  it("a watcher joining at any delta gets the step's text so far as one delta, and nothing once the run has ended", async () => {
    const server = await loopServer('anthropic');
    const texts = new StepTexts();
    const sofar = new Map<number, string>();
    const mismatches: string[] = [];
    const parsed = parsePrompt(loopPrompt('{ provider: anthropic, model: m-test }'), 'loop.md');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const models = modelDirectory({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test' }, {}, { round: fastRounds() });
    const outcome = await runOnHost(
      await cliPlatform(),
      { packs: [statsPack([])], models, operator: new ScriptedOperator([]) },
      {
        prompt: parsed.prompt,
        seed: 'stream',
        onEvent: (event) => texts.event(event),
        onModelDelta: (delta) => {
          texts.take(delta);
          sofar.set(delta.step, (sofar.get(delta.step) ?? '') + delta.text);
          const joined = JSON.stringify(texts.inFlight());
          const expected = JSON.stringify([{ type: 'model_delta', step: delta.step, task: '0', text: sofar.get(delta.step) }]);
          if (joined !== expected) mismatches.push(joined);
        },
      },
    );
    expect(outcome.status).toBe('completed');
    expect(sofar.size).toBe(2);
    expect(mismatches).toEqual([]);
    expect(texts.inFlight()).toEqual([]);
  });

  it('a delta listener that throws does not fail the round', async () => {
    const { outcome } = await run('openai', (await loopServer('openai')).url, {
      onModelDelta: () => {
        throw new Error('the watcher went away');
      },
    });
    expect(outcome).toMatchObject({ status: 'completed', result: 'Hello, wörld — ☃ "quoted"\nand 🎉 done.' });
  });

  it('a replay answers the rounds from the journal: no request, no delta, the same result', async () => {
    const server = await loopServer('openai');
    const first = await run('openai', server.url, { onModelDelta: () => undefined });
    const sent = server.requests.length;
    const deltas: ModelDelta[] = [];
    const replayed = await run('openai', server.url, { onModelDelta: (delta) => deltas.push(delta), journal: first.outcome.journal });
    expect(replayed.outcome).toMatchObject({ status: 'completed', result: 'Hello, wörld — ☃ "quoted"\nand 🎉 done.' });
    expect(server.requests).toHaveLength(sent);
    expect(deltas).toEqual([]);
    expect(JSON.stringify(replayed.outcome.journal)).toBe(JSON.stringify(first.outcome.journal));
  });
});

describe("tasks' model steps streamed", () => {
  it('each delta names the task whose step it is, and each task gets its own text', async () => {
    const server = await streamServer((body) => (body.stream === true ? { pieces: bytePieces(recorded('openai-text.sse'), 5) } : recorded('openai-text.json')));
    servers.push(server);
    const text = [
      '---',
      'name: two-tasks',
      'description: Two tasks answer at once.',
      'runvil: 0',
      'models:',
      '  writer: { provider: openai, model: m-test }',
      '---',
      '# Two tasks',
      '',
      '## Main',
      '```lua',
      "local a, b = tasks.spawn('## Answer'), tasks.spawn('## Answer')",
      "return tasks.await(a) .. '|' .. tasks.await(b)",
      '```',
      '',
      '## Answer',
      'Say hi.',
      '',
    ].join('\n');
    const parsed = parsePrompt(text, 'two-tasks.md');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const deltas: ModelDelta[] = [];
    const events: RunEvent[] = [];
    const host = { packs: [], models: modelDirectory({ OPENAI_BASE_URL: server.url }, {}, { round: fastRounds() }), operator: new ScriptedOperator([]) };
    const outcome = await runOnHost(await cliPlatform(), host, {
      prompt: parsed.prompt,
      seed: 'tasks',
      onEvent: (event) => events.push(event),
      onModelDelta: (delta) => deltas.push(delta),
    });
    const reply = 'Hello, wörld — ☃ "quoted"\nand 🎉 done.';
    expect(outcome).toMatchObject({ status: 'completed', result: `${reply}|${reply}` });
    for (const task of ['0.0', '0.1']) {
      const start = events.find((event) => event.type === 'model_turn_started' && event.task === task)!;
      const own = deltas.filter((delta) => delta.task === task);
      expect(own.every((delta) => delta.step === start.seq)).toBe(true);
      expect(own.map((delta) => delta.text).join('')).toBe(reply);
    }
    expect(new Set(deltas.map((delta) => delta.task))).toEqual(new Set(['0.0', '0.1']));
  });
});

describe('a streamed step cut or cancelled during a run', () => {
  it("a round sent again after a cut tells the step's restart, and the run ends as if it never broke", async () => {
    const tools = Buffer.from(recorded('openai-tools.sse'));
    const text = recorded('openai-text.sse');
    const server = await streamServer((_body, index) =>
      index === 0 ? { pieces: [tools.subarray(0, tools.indexOf('call_b'))], after: 'cut' } : { pieces: bytePieces(index === 1 ? tools : text, 9) },
    );
    servers.push(server);
    const deltas: ModelDelta[] = [];
    const parsed = parsePrompt(loopPrompt('{ provider: openai, model: m-test }'), 'loop.md');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const models = modelDirectory({ OPENAI_BASE_URL: server.url }, {}, { round: fastRounds() });
    const outcome = await runOnHost(
      await cliPlatform(),
      { packs: [statsPack([])], models, operator: new ScriptedOperator([]) },
      {
        prompt: parsed.prompt,
        seed: 'stream',
        onModelDelta: (delta) => deltas.push(delta),
      },
    );
    expect(outcome).toMatchObject({ status: 'completed', result: 'Hello, wörld — ☃ "quoted"\nand 🎉 done.' });
    const first = deltas.filter((delta) => delta.step === deltas[0]!.step);
    expect(first.map((delta) => (delta.restart ? '|restart|' : delta.text)).join('')).toBe('Let me count.|restart|Let me count.');
    expect(first.find((delta) => delta.restart)).toEqual({ type: 'model_delta', step: deltas[0]!.step, task: '0', text: '', restart: true });
  });

  it("cancelling the run during a step closes the provider's request", async () => {
    const sse = Buffer.from(recorded('openai-text.sse'));
    const server = await streamServer(() => ({ pieces: [sse.subarray(0, sse.indexOf('\n\n', sse.indexOf('Hello')) + 2)], after: 'open' }));
    servers.push(server);
    const controller = new AbortController();
    const parsed = parsePrompt(loopPrompt('{ provider: openai, model: m-test }'), 'loop.md');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const models = modelDirectory({ OPENAI_BASE_URL: server.url }, {}, { round: fastRounds({ timeoutMs: 30_000, idleMs: 30_000 }) });
    const outcome = await runOnHost(
      await cliPlatform(),
      { packs: [statsPack([])], models, operator: new ScriptedOperator([]) },
      {
        prompt: parsed.prompt,
        seed: 'stream',
        signal: controller.signal,
        onModelDelta: () => controller.abort(),
      },
    );
    expect(outcome.status).toBe('failed');
    await server.served[0]!.closed;
    expect(server.served[0]!.closedByClient).toBe(true);
    expect(server.requests).toHaveLength(1);
  });
});
