/**
 * The tool scope check's events and the section field of a tool round's events ("The tool
 * scope check and section names"): tool_scope_validation_started / _succeeded once per
 * section, before the first round, and the section every round event names. The round's own
 * events are in tools-round-events.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, prompt } from './helpers.ts';
import { SEARCH, WRITER, eventsOf, resultOf, roundSequence as sequence, runFixture } from './fixture-run.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

describe('the tool scope check', () => {
  it('fires once per section, at the render, before the first round; later rounds and loops report only their rounds', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "models.use('writer')",
          "tools.offer('web/search')",
          "messages:user('one')",
          'models.loop()',
          "messages:user('two')",
          'models.loop()',
          "return 'ok'",
        ].join('\n'),
        `uses: [web]\n${WRITER}`,
      ),
      {
        host: SEARCH,
        model: [{ tool_calls: [{ id: 'c1', name: 'web_search', arguments: { query: 'lua' } }] }, { content: 'a' }, { content: 'b' }],
      },
    );
    expect(resultOf(outcome)).toBe('ok');
    expect(sequence(outcome.events)).toEqual([
      'tool_scope_validation_started@0',
      'tool_scope_validation_succeeded@0',
      'model_turn_completed@1',
      'assistant_tool_calls@1',
      'tool_call_succeeded@1',
      'tool_result@1',
      'model_turn_completed@2',
      'model_turn_completed@3',
    ]);
  });

  it('fires again for each section entry, with the section field naming it, even when nothing is offered', async () => {
    const outcome = await runFixture(
      platform,
      prompt(
        [
          '# Two',
          '',
          '## Ask',
          '',
          '```lua',
          "models.use('writer')",
          "tools.offer('web/search')",
          "messages:user('one')",
          'models.loop()',
          '```',
          '',
          '## Plain',
          '',
          '```lua',
          "models.use('writer')",
          "messages:user('two')",
          'models.loop()',
          'return messages[#messages].content',
          '```',
          '',
        ].join('\n'),
        `uses: [web]\n${WRITER}`,
      ),
      { host: SEARCH, model: [{ content: 'a' }, { content: 'b' }] },
    );
    expect(resultOf(outcome)).toBe('b');
    expect(
      eventsOf(outcome, 'tool_scope_validation_started', 'tool_scope_validation_succeeded', 'model_turn_completed').map(
        (event) => `${event.type}:${event.section}`,
      ),
    ).toEqual([
      'tool_scope_validation_started:Ask',
      'tool_scope_validation_succeeded:Ask',
      'model_turn_completed:Ask',
      'tool_scope_validation_started:Plain',
      'tool_scope_validation_succeeded:Plain',
      'model_turn_completed:Plain',
    ]);
  });

  it('sends no validation events for models.infer, which sends no tools', async () => {
    const outcome = await runFixture(platform, lua("models.use('writer')\ntools.offer('web/search')\nreturn models.infer('hi')", `uses: [web]\n${WRITER}`), {
      model: [{ content: 'hello' }],
    });
    expect(resultOf(outcome)).toBe('hello');
    expect(eventsOf(outcome, 'tool_scope_validation_started', 'tool_scope_validation_succeeded')).toEqual([]);
  });
});

describe('the section field', () => {
  it('names the section that made the call: a called section, and the section of a model call inside a loop', async () => {
    const outcome = await runFixture(
      platform,
      prompt(
        [
          '# Sections',
          '',
          '## Main',
          '',
          '```lua',
          "models.use('writer')",
          "tools.offer('web/fetch')",
          "call('## Helper')",
          "messages:user('go')",
          'return models.loop()',
          '```',
          '',
          '## Helper',
          '',
          '```lua',
          "tools.call('web/search', { query = 'lua' })",
          '```',
          '',
        ].join('\n'),
        `uses: [web]\n${WRITER}`,
      ),
      {
        host: SEARCH,
        model: [{ tool_calls: [{ id: 'f1', name: 'web_fetch', arguments: {} }] }, { content: 'done' }],
      },
    );
    expect(resultOf(outcome)).toBe('done');
    expect(
      eventsOf(outcome, 'tool_call_succeeded', 'tool_call_failed', 'tool_result', 'assistant_tool_calls').map((event) => `${event.type}:${event.section}`),
    ).toEqual(['tool_call_succeeded:Helper', 'tool_result:Helper', 'assistant_tool_calls:Main', 'tool_call_failed:Main', 'tool_result:Main']);
  });
});
