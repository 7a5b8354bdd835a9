/**
 * The Tools chapter's "takes ... got {type}" argument errors of tools.get, tools.offer and
 * tools.call (packs.*, local tools, task built-ins and offers after the render are in
 * offer-argument-errors.test.ts): each is a lua-kind error that pcall catches, whose message names the
 * Lua type of the bad value (integer, not number, for 42). Messages the chapter quotes are
 * checked byte for byte; the rest are the Engine's own texts. The other globals a tool
 * section uses are in globals-argument-errors.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform } from './helpers.ts';
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
