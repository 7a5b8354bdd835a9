/**
 * The Tools chapter's "takes ... got {type}" argument errors (tools.*, packs.*, and offers
 * after the render): each is a lua-kind error that pcall catches, whose message names the
 * Lua type of the bad value (integer, not number, for 42). Messages the chapter quotes are
 * checked byte for byte; the rest are the Engine's own texts. The other globals a tool
 * section uses are in globals-argument-errors.test.ts.
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

describe('tools.get', () => {
  it('takes a tool id string only, and names the type of anything else', async () => {
    expect(
      await errorsOf([
        'tools.get(42)',
        'tools.get()',
        'tools.get(nil)',
        'tools.get(1.5)',
        'tools.get(true)',
        'tools.get({})',
        'tools.get(print)',
        "tools.get(models.get('writer'))",
        "tools.get(tools.get('web/fetch'))",
      ]),
    ).toEqual([
      lua_('tools.get takes a tool id, got integer'),
      lua_('tools.get takes a tool id, got nil'),
      lua_('tools.get takes a tool id, got nil'),
      lua_('tools.get takes a tool id, got number'),
      lua_('tools.get takes a tool id, got boolean'),
      lua_('tools.get takes a tool id, got table'),
      lua_('tools.get takes a tool id, got function'),
      lua_('tools.get takes a tool id, got userdata'),
      lua_('tools.get takes a tool id, got userdata'),
    ]);
  });
});

describe('tools.offer', () => {
  it('takes tool ids, tool objects, or arrays of them, and names the type of anything else', async () => {
    expect(
      await errorsOf([
        'tools.offer(42)',
        'tools.offer(1.5)',
        'tools.offer(true)',
        'tools.offer(print)',
        "tools.offer(packs.get('web'))",
        "tools.offer(models.get('writer'))",
        "tools.offer({ 'web/search', { 'web/fetch' } })",
        "tools.offer({ 'web/search', packs.get('web') })",
        "tools.offer({ 'web/search', 7 })",
      ]),
    ).toEqual([
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got integer'),
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got number'),
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got boolean'),
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got function'),
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got userdata'),
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got userdata'),
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got table'),
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got userdata'),
      lua_('tools.offer takes tool ids, tool objects, or arrays of them, got integer'),
    ]);
  });

  it('names the type of a second argument, after one id or an array', async () => {
    expect(
      await errorsOf([
        "tools.offer('web/search', 'web/fetch')",
        "tools.offer({ 'web/search' }, 'web/fetch')",
        "tools.offer('web/search', 2)",
        "tools.offer('web/search', nil)",
        "tools.offer('web/search', {})",
      ]),
    ).toEqual([
      lua_('tools.offer takes one tool or a list of them, got extra string'),
      lua_('tools.offer takes one tool or a list of them, got extra string'),
      lua_('tools.offer takes one tool or a list of them, got extra integer'),
      lua_('tools.offer takes one tool or a list of them, got extra nil'),
      lua_('tools.offer takes one tool or a list of them, got extra table'),
    ]);
  });

  it('records nothing from a refused call, so a later valid offer lands in order', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "models.use('writer')",
          "pcall(tools.offer, 'web/search', 'extra')",
          "pcall(tools.offer, { 'web/search', 42 })",
          "pcall(tools.offer, { 'web/search', 'web/nothing' })",
          "tools.offer('web/fetch')",
          "tools.offer('web/search')",
          "messages:user('go')",
          'return models.loop()',
        ].join('\n'),
        `uses: [web]\n${WRITER}`,
      ),
      { model: [{ content: 'done' }] },
    );
    expect(resultOf(outcome)).toBe('done');
    expect(advertised(outcome.requests)).toEqual([['web_fetch', 'web_search']]);
  });
});

describe('tools.call', () => {
  it('takes a tool id, a local alias, or a tool object first', async () => {
    expect(
      await errorsOf([
        'tools.call(42, {})',
        'tools.call(nil, {})',
        'tools.call()',
        "tools.call({ id = 'web/fetch', name = 'web_fetch' }, {})",
        "tools.call(models.get('writer'), {})",
        "tools.call(packs.get('web'), {})",
        'tools.call(true)',
        'tools.call(print)',
        'tools.call(2.5)',
      ]),
    ).toEqual([
      lua_('tools.call takes a tool id, a local alias, or a tool object, got integer'),
      lua_('tools.call takes a tool id, a local alias, or a tool object, got nil'),
      lua_('tools.call takes a tool id, a local alias, or a tool object, got nil'),
      lua_('tools.call takes a tool id, a local alias, or a tool object, got table'),
      lua_('tools.call takes a tool id, a local alias, or a tool object, got userdata'),
      lua_('tools.call takes a tool id, a local alias, or a tool object, got userdata'),
      lua_('tools.call takes a tool id, a local alias, or a tool object, got boolean'),
      lua_('tools.call takes a tool id, a local alias, or a tool object, got function'),
      lua_('tools.call takes a tool id, a local alias, or a tool object, got number'),
    ]);
  });

  it('takes a table of arguments second, for a catalog tool and a local tool alike', async () => {
    const results = await errorsOf(
      [
        "tools.call('web/fetch', 'https://www.lua.org/')",
        "tools.call('web/fetch', 42)",
        "tools.call('web/fetch', 4.5)",
        "tools.call('web/fetch', true)",
        "tools.call('web/fetch', print)",
        "tools.call('grab', 'x')",
        "tools.call(tools.get('web/fetch'), 42)",
      ],
      "tools.offer_local('grab', 'Grab', {}, function() return 'grabbed' end)",
    );
    expect(results).toEqual([
      lua_('args must be a table, got string'),
      lua_('args must be a table, got integer'),
      lua_('args must be a table, got number'),
      lua_('args must be a table, got boolean'),
      lua_('args must be a table, got function'),
      lua_('args must be a table, got string'),
      lua_('args must be a table, got integer'),
    ]);
  });

  it('refuses arguments with no JSON form, with args must be a JSON-representable table: {detail}', async () => {
    const [withFunction, nested] = await errorsOf(["tools.call('web/fetch', { url = print })", "tools.call('web/fetch', { opts = { f = print } })"]);
    expect(withFunction).toMatch(/^lua\|args must be a JSON-representable table: \S/);
    expect(nested).toMatch(/^lua\|args must be a JSON-representable table: \S/);
  });

  it('sends no tool call and counts nothing when an argument is refused', async () => {
    const outcome = await runFixture(platform, lua("pcall(tools.call, 'web/fetch', 42)\npcall(tools.call, 42)\nreturn tostring(tools.calls)", 'uses: [web]\n'));
    expect(resultOf(outcome)).toBe('nil');
    expect(outcome.journal.filter((entry) => JSON.stringify(entry).includes('tool.call'))).toEqual([]);
  });
});

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
