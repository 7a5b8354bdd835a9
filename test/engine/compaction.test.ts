import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { ScriptedProvider } from '../../src/models/scripted.ts';
import { createHarness, servicesOf } from '../../src/host/harness.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import { lua, newPlatform, resultOf, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

/** A run whose model rounds the returned provider records. */
async function withProvider(code: string, frontmatter: string, replies: ConstructorParameters<typeof ScriptedProvider>[0]) {
  const provider = new ScriptedProvider(replies);
  const harness = createHarness({
    runId: 'run-1',
    store: new MemoryRunStore(),
    packs: new Map(),
    services: servicesOf(),
    operator: new ScriptedOperator([]),
    models: { provider: () => provider },
  });
  const outcome = await run(platform, lua(code, frontmatter), { harness });
  return { outcome, provider };
}

const history = `
for i = 1, 12 do
  messages:user('question number ' .. i .. ' about the weather in some town')
  messages:assistant('answer number ' .. i .. ' about the weather in that town')
end
messages:user('and tomorrow?')`;

describe('token usage', () => {
  it('sums every round into the run totals and the run_completed event', async () => {
    const provider = new ScriptedProvider([]);
    provider.round = async () => ({ ok: true, reply: { content: 'ok', tool_calls: [], usage: { input_tokens: 7, output_tokens: 3 } } });
    const harness = createHarness({
      runId: 'run-1',
      store: new MemoryRunStore(),
      packs: new Map(),
      services: servicesOf(),
      operator: new ScriptedOperator([]),
      models: { provider: () => provider },
    });
    const outcome = await run(platform, lua(`models.infer('a')\nreturn models.infer('b')`, 'models:\n  writer: {}\n'), { harness });
    expect(outcome.usage).toEqual({ rounds: 2, input_tokens: 14, output_tokens: 6 });
    expect(outcome.events.find((e) => e.type === 'run_completed')!.usage).toEqual({ rounds: 2, input_tokens: 14, output_tokens: 6 });
    expect(outcome.events.filter((e) => e.type === 'model_turn_completed').map((e) => e.usage)).toEqual([
      { input_tokens: 7, output_tokens: 3 },
      { input_tokens: 7, output_tokens: 3 },
    ]);
  });
});

describe('the context precheck', () => {
  const small = 'models:\n  writer: { context_window: 150 }\n';

  it('refuses a round too big for the window before it is sent, compacts, and retries it', async () => {
    const { outcome, provider } = await withProvider(
      `models.use('writer')\ntools.offer_local('note', 'Take a note', {}, function() return 'noted' end)\n${history}\nreturn models.loop() .. '|' .. #messages .. '|' .. messages[1].content:sub(1, 35)`,
      'models:\n  writer: { context_window: 450 }\n',
      [{ content: 'they asked about the weather twelve times' }, { content: 'sunny' }],
    );
    expect(resultOf(outcome)).toBe('sunny|3|Summary of the conversation so far:');
    // The summary round goes first, alone and without tools; the retried round keeps the
    // section's rendered tool list.
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[0]!.tools).toBeNull();
    expect(provider.requests[0]!.messages[0]!.content).toMatch(/^Summarize the conversation below/);
    expect(provider.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'user']);
    expect(provider.requests[1]!.tools!.map((t) => t.name)).toEqual(['note']);
    const types = outcome.events.map((e) => e.type);
    expect(types.filter((t) => t === 'tool_scope_validation_started')).toHaveLength(1);
    expect(types).toContain('conversation_compacted');
  });

  it('fails the loop with Model when even the summary cannot fit', async () => {
    const { outcome, provider } = await withProvider(`models.use('writer')\n${history}\nreturn models.loop()`, small, []);
    expect(outcome.status).toBe('failed');
    if (outcome.status === 'failed') {
      expect(outcome.error.kind).toBe('Model');
      expect(outcome.error.message).toMatch(
        /^the round needs about \d+ tokens, more than the context window of 150 that role "writer" declares, so the conversation is too long to summarize/,
      );
    }
    expect(provider.requests).toHaveLength(0);
  });

  it('fails with Model when the compacted conversation still does not fit', async () => {
    const { outcome } = await withProvider(
      `models.use('writer')\ncompactors.add(function(records) return records end)\n${history}\nreturn models.loop()`,
      small,
      [],
    );
    expect(outcome.status === 'failed' && outcome.error.message).toMatch(/even after compacting the conversation$/);
  });
});

describe('models.compact and compactors', () => {
  it('runs the compactors in order and replaces the conversation with what they return', async () => {
    const { outcome } = await withProvider(
      `
models.use('writer')
${history}
compactors.add(function(records) local out = {} for i = #records - 3, #records do out[#out + 1] = records[i] end return out end)
compactors.add(function(records) table.remove(records, 1) return records end)
models.compact()
return #messages .. '|' .. messages[#messages].content`,
      'models:\n  writer: {}\n',
      [],
    );
    expect(resultOf(outcome)).toBe('3|and tomorrow?');
    expect(outcome.events.find((e) => e.type === 'conversation_compacted')).toMatchObject({ before: 25, after: 3 });
  });

  it('summarizes with the model when no compactor is registered (compactors.clear)', async () => {
    const { outcome, provider } = await withProvider(
      `
models.use('writer')
${history}
compactors.add(function(records) return {} end)
compactors.clear()
models.compact()
return #messages .. '|' .. messages[1].content`,
      'models:\n  writer: {}\n',
      [{ content: 'weather talk' }],
    );
    expect(resultOf(outcome)).toBe('2|Summary of the conversation so far:\nweather talk');
    expect(provider.requests).toHaveLength(1);
  });

  it('is refused inside a local tool handler', async () => {
    const { outcome } = await withProvider(
      `
tools.offer_local('squash', 'Squash', {}, function() models.compact() end)
local ok, err = pcall(tools.call, 'squash', {})
return tostring(err)`,
      'models:\n  writer: {}\n',
      [],
    );
    expect(resultOf(outcome)).toBe('models.compact is unavailable inside a local tool handler');
  });

  it('keeps message records read-only', async () => {
    const { outcome } = await withProvider(
      `messages:user('hi')\nlocal ok, err = pcall(function() messages[1].content = 'x' end)\nreturn tostring(err)`,
      '',
      [],
    );
    expect(resultOf(outcome)).toBe('message records are read-only: cannot assign field "content"; append a new record instead');
  });

  it('replays a compacted run from its journal', async () => {
    const code = `models.use('writer')\n${history}\nreturn models.loop()`;
    const frontmatter = 'models:\n  writer: { context_window: 450 }\n';
    const { outcome } = await withProvider(code, frontmatter, [{ content: 'summary' }, { content: 'sunny' }]);
    const replay = await run(platform, lua(code, frontmatter), {
      journal: outcome.journal,
      harness: {
        perform: async () => {
          throw new Error('the replay called the Harness');
        },
      },
    });
    expect(resultOf(replay)).toBe('sunny');
    expect(replay.events).toEqual(outcome.events);
  });
});
