/**
 * The Tools chapter's "takes ... got {type}" argument errors of packs.get, packs.offer,
 * tools.offer_local, tools.allow_tasks and offers after the render (tools.get, tools.offer
 * and tools.call are in tools-argument-errors.test.ts): each is a lua-kind error that pcall
 * catches, whose message names the Lua type of the bad value (integer, not number, for 42).
 * Messages the chapter quotes are checked byte for byte; the rest are the Engine's own texts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, prompt } from './helpers.ts';
import { WRITER, advertised, resultOf, runFixture } from './fixture-run.ts';
import { argumentErrors, lua_ } from './argument-errors.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const errorsOf = (expressions: string[], setup = '') => argumentErrors(platform, expressions, setup);

describe('packs.get', () => {
  it('takes a Pack id string, and reads nil for any string that names no Pack', async () => {
    expect(
      await errorsOf([
        'packs.get(42)',
        'packs.get({})',
        'packs.get()',
        'packs.get(true)',
        "packs.get(tools.get('web/fetch'))",
        "tostring(packs.get('web/fetch')) .. tostring(packs.get('Web')) .. tostring(packs.get(''))",
      ]),
    ).toEqual([
      lua_('packs.get takes a Pack id, got integer'),
      lua_('packs.get takes a Pack id, got table'),
      lua_('packs.get takes a Pack id, got nil'),
      lua_('packs.get takes a Pack id, got boolean'),
      lua_('packs.get takes a Pack id, got userdata'),
      'ok',
    ]);
  });
});

describe('packs.offer', () => {
  it('takes a Pack id, a Pack object, or a list of them, and names the type of anything else', async () => {
    expect(
      await errorsOf([
        'packs.offer()',
        'packs.offer(nil)',
        'packs.offer(42)',
        'packs.offer(true)',
        'packs.offer(print)',
        "packs.offer(tools.get('web/fetch'))",
        "packs.offer(models.get('writer'))",
        "packs.offer({ 'web', 42 })",
        "packs.offer({ 'web', { 'user-input' } })",
        "packs.offer({ 'web', tools.get('web/fetch') })",
      ]),
    ).toEqual([
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got nil'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got nil'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got integer'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got boolean'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got function'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got userdata'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got userdata'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got integer'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got table'),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got userdata'),
    ]);
  });

  it('names the type of the first extra argument', async () => {
    expect(await errorsOf(["packs.offer('web', 'user-input')", "packs.offer('web', 3, 'x')", "packs.offer({ 'web' }, nil)"])).toEqual([
      lua_('packs.offer takes one Pack or a list of them, got extra string'),
      lua_('packs.offer takes one Pack or a list of them, got extra integer'),
      lua_('packs.offer takes one Pack or a list of them, got extra nil'),
    ]);
  });

  it('quotes a string that is no Pack id and adds the Pack id parse error', async () => {
    expect(
      await errorsOf(["packs.offer('web/fetch')", "packs.offer('runvil/web')", "packs.offer('Web')", "packs.offer('')", "packs.offer({ 'web', 'we b' })"]),
    ).toEqual([
      lua_(
        'packs.offer takes a Pack id, a Pack object, or a list of them, got "web/fetch": invalid Pack id: a Pack id is one segment, such as `web`, with no \'/\'',
      ),
      lua_(
        'packs.offer takes a Pack id, a Pack object, or a list of them, got "runvil/web": invalid Pack id: a Pack id is one segment, such as `web`, with no \'/\'',
      ),
      lua_(
        "packs.offer takes a Pack id, a Pack object, or a list of them, got \"Web\": invalid Pack id: segments may contain only lowercase ASCII letters, digits, '-', '_', '.'",
      ),
      lua_('packs.offer takes a Pack id, a Pack object, or a list of them, got "": invalid Pack id: segments must not be empty'),
      lua_(
        "packs.offer takes a Pack id, a Pack object, or a list of them, got \"we b\": invalid Pack id: segments may contain only lowercase ASCII letters, digits, '-', '_', '.'",
      ),
    ]);
  });

  it('offers nothing from a refused list, so the section keeps its earlier offers', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "models.use('writer')",
          "packs.offer('user-input')",
          "pcall(packs.offer, { 'web', 42 })",
          "pcall(packs.offer, { 'web', 'nothing-here' })",
          "messages:user('go')",
          'return models.loop()',
        ].join('\n'),
        `uses: [web, user-input]\n${WRITER}`,
      ),
      { model: [{ content: 'done' }] },
    );
    expect(resultOf(outcome)).toBe('done');
    expect(advertised(outcome.requests)).toEqual([['user-input_ask']]);
  });
});

describe('tools.offer_local', () => {
  it('takes an alias string, a description string, a params table and a handler function, in that order', async () => {
    expect(
      await errorsOf([
        'tools.offer_local()',
        "tools.offer_local(42, 'd', {}, print)",
        "tools.offer_local('a1', nil, {}, print)",
        "tools.offer_local('a2', 7, {}, print)",
        "tools.offer_local('a3', 'd', nil, print)",
        "tools.offer_local('a4', 'd', 'value', print)",
        "tools.offer_local('a5', 'd', {})",
        "tools.offer_local('a6', 'd', {}, 'handler')",
        "tools.offer_local('a7', 'd', {}, {})",
      ]),
    ).toEqual([
      lua_('tools.offer_local takes an alias string first, got nil'),
      lua_('tools.offer_local takes an alias string first, got integer'),
      lua_('tools.offer_local takes a description string second, got nil'),
      lua_('tools.offer_local takes a description string second, got integer'),
      lua_('tools.offer_local takes a params table third, got nil'),
      lua_('tools.offer_local takes a params table third, got string'),
      lua_('tools.offer_local takes a handler function fourth, got nil'),
      lua_('tools.offer_local takes a handler function fourth, got string'),
      lua_('tools.offer_local takes a handler function fourth, got table'),
    ]);
  });

  it('defines no tool when an argument is refused, so the alias stays free', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "pcall(tools.offer_local, 'grab', 'Grab', {}, 'not a function')",
          "pcall(tools.offer_local, 'grab', 'Grab', { n = 'float' }, function() return 'x' end)",
          "local ok, err = pcall(tools.call, 'grab', {})",
          "tools.offer_local('grab', 'Grab', {}, function() return 'defined' end)",
          "return err.kind .. '|' .. err.name .. '|' .. tools.call('grab', {})",
        ].join('\n'),
      ),
    );
    expect(resultOf(outcome)).toBe('unbound_tool|grab|defined');
  });

  it('words the params errors as the chapter does', async () => {
    expect(
      await errorsOf([
        "tools.offer_local('p1', 'd', { n = 'float' }, print)",
        "tools.offer_local('p2', 'd', { n = 'String' }, print)",
        "tools.offer_local('p3', 'd', { n = 42 }, print)",
        "tools.offer_local('p4', 'd', { n = true }, print)",
      ]),
    ).toEqual([
      lua_('tools.offer_local param "n" has unsupported type "float": expected "string", "integer", "number", or "boolean"'),
      lua_('tools.offer_local param "n" has unsupported type "String": expected "string", "integer", "number", or "boolean"'),
      lua_('tools.offer_local param "n" must be a type string or a {type, description} array'),
      lua_('tools.offer_local param "n" must be a type string or a {type, description} array'),
    ]);
  });
});

describe('tools.allow_tasks', () => {
  it('accepts nothing, nil or a list of heading strings, with the chapter messages for anything else', async () => {
    expect(
      await errorsOf([
        'tools.allow_tasks()',
        'tools.allow_tasks(nil)',
        "tools.allow_tasks({ '## Only' })",
        "tools.allow_tasks('## Research')",
        'tools.allow_tasks(42)',
        'tools.allow_tasks(true)',
        'tools.allow_tasks(print)',
        "tools.allow_tasks({ '## A', 42 })",
        "tools.allow_tasks({ '## A', { '## B' } })",
        "tools.allow_tasks({ '## A', '   ' })",
        "tools.allow_tasks({ '' })",
        'tools.allow_tasks({})',
        "tools.allow_tasks({ first = '## A' })",
      ]),
    ).toEqual([
      'ok',
      'ok',
      'ok',
      lua_('tools.allow_tasks targets must be a list of section headings, got string'),
      lua_('tools.allow_tasks targets must be a list of section headings, got integer'),
      lua_('tools.allow_tasks targets must be a list of section headings, got boolean'),
      lua_('tools.allow_tasks targets must be a list of section headings, got function'),
      lua_('tools.allow_tasks targets must be section heading strings, got integer'),
      lua_('tools.allow_tasks targets must be section heading strings, got table'),
      lua_('tools.allow_tasks targets must be non-empty section headings'),
      lua_('tools.allow_tasks targets must be non-empty section headings'),
      lua_('tools.allow_tasks targets must name at least one section; call it with no argument to allow any section'),
      lua_('tools.allow_tasks targets must name at least one section; call it with no argument to allow any section'),
    ]);
  });

  it("leaves the section's earlier allowlist in place after a refused call", async () => {
    const outcome = await runFixture(
      platform,
      prompt(
        [
          '# Tasks',
          '',
          '## Plan',
          '',
          '```lua',
          "models.use('writer')",
          "tools.allow_tasks({ ' ## Draft ' })",
          "pcall(tools.allow_tasks, { '## Draft', 42 })",
          'pcall(tools.allow_tasks, {})',
          "messages:user('go')",
          'models.loop()',
          'return messages[3].content',
          '```',
          '',
          '## Draft',
          '',
          '```lua',
          "return 'draft'",
          '```',
          '',
        ].join('\n'),
        WRITER,
      ),
      {
        model: [{ tool_calls: [{ id: 'c1', name: 'task', arguments: { target: '## Other' } }] }, { content: 'done' }],
      },
    );
    expect(resultOf(outcome)).toBe('task: target `## Other` is not allowed; allowed targets: ["## Draft"]');
    expect(advertised(outcome.requests)[0]).toEqual(['task', 'task_cancel', 'task_status', 'await_tasks']);
  });
});

describe('offers after the render', () => {
  const FIXED = ": the section's tool list is fixed at its first models.loop round; make every offer before the first loop, or offer in another section";

  it('refuse before looking at the arguments, for each of the three functions', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "models.use('writer')",
          "tools.offer('web/search')",
          "messages:user('go')",
          'models.loop()',
          'local out = {}',
          "for _, try in ipairs({ function() tools.offer(42) end, function() tools.offer('web/search') end, function() packs.offer() end,",
          "  function() packs.offer('web', 'extra') end, function() tools.offer_local() end, function() tools.offer_local('x', 'X', {}, print) end }) do",
          '  local ok, err = pcall(try)',
          "  out[#out + 1] = err.kind .. '|' .. tostring(err)",
          'end',
          "messages:user('again')",
          'models.loop()',
          "return table.concat(out, '\\n')",
        ].join('\n'),
        `uses: [web]\n${WRITER}`,
      ),
      { host: { web: { search: { '*': 'r' } } }, model: [{ content: 'one' }, { content: 'two' }] },
    );
    expect(resultOf(outcome).split('\n')).toEqual([
      `lua|tools.offer${FIXED}`,
      `lua|tools.offer${FIXED}`,
      `lua|packs.offer${FIXED}`,
      `lua|packs.offer${FIXED}`,
      `lua|tools.offer_local${FIXED}`,
      `lua|tools.offer_local${FIXED}`,
    ]);
    expect(advertised(outcome.requests)).toEqual([['web_search'], ['web_search']]);
  });

  it('still work after a round refused before the build: empty messages, no model role', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          'local a = pcall(models.loop)',
          "models.use('writer')",
          'local b = pcall(models.loop)',
          "tools.offer('web/fetch')",
          "messages:user('go')",
          "return tostring(a) .. tostring(b) .. '|' .. models.loop()",
        ].join('\n'),
        `uses: [web]\n${WRITER}`,
      ),
      { model: [{ content: 'done' }] },
    );
    expect(resultOf(outcome)).toBe('falsefalse|done');
    expect(advertised(outcome.requests)).toEqual([['web_fetch']]);
  });

  it('are refused after a first round the context precheck refused: the render comes first', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "models.use('writer')",
          'compactors.add(function(records) return records end)',
          "messages:user(string.rep('long ', 200))",
          'local ok, err = pcall(models.loop)',
          "local offered, refusal = pcall(tools.offer, 'web/fetch')",
          "return tostring(ok) .. '|' .. err.kind .. '|' .. tostring(offered) .. '|' .. tostring(refusal)",
        ].join('\n'),
        'uses: [web]\nmodels:\n  writer: { context_window: 20 }\n',
      ),
      { model: [{ content: 'never sent' }] },
    );
    expect(resultOf(outcome)).toBe(`false|model|false|tools.offer${FIXED}`);
    expect(outcome.requests).toEqual([]);
  });

  it('accept a usable Pack with no tools, which adds nothing, and an empty list', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "models.use('writer')",
          "packs.offer('subagents')",
          'packs.offer({})',
          'tools.offer({})',
          'tools.offer()',
          "tools.offer(packs.get('subagents').tools)",
          "messages:user('go')",
          'return models.loop()',
        ].join('\n'),
        WRITER,
      ),
      { model: [{ content: 'done' }] },
    );
    expect(resultOf(outcome)).toBe('done');
    expect(advertised(outcome.requests)).toEqual([null]);
  });
});
