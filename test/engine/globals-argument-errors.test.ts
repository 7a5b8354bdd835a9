/**
 * The argument errors of the globals a tool section uses (models, messages, store, json,
 * untrusted, jump, call, require): each is a lua-kind error that pcall catches, whose message
 * names the Lua type of the bad value (integer, not number, for 42). The Tools chapter's own
 * (tools.*, packs.*) are in tools-argument-errors.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { newPlatform } from './helpers.ts';
import { argumentErrors, lua_ } from './argument-errors.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const errorsOf = (expressions: string[], setup = '') => argumentErrors(platform, expressions, setup);

describe('models, messages and the other globals a tool section uses', () => {
  it('models.use, models.default and models.get take a role label', async () => {
    expect(
      await errorsOf([
        'models.use(42)',
        'models.use()',
        'models.use({})',
        'models.default(true)',
        'models.default()',
        'models.get(1.5)',
        'models.get()',
        "models.get(tools.get('web/fetch'))",
      ]),
    ).toEqual([
      lua_('models.use takes a role label, got integer'),
      lua_('models.use takes a role label, got nil'),
      lua_('models.use takes a role label, got table'),
      lua_('models.default takes a role label, got boolean'),
      lua_('models.default takes a role label, got nil'),
      lua_('models.get takes a role label, got number'),
      lua_('models.get takes a role label, got nil'),
      lua_('models.get takes a role label, got userdata'),
    ]);
  });

  it('models.infer, a handle’s infer, and messages:user/system/assistant take text (a number counts as text)', async () => {
    expect(
      await errorsOf(
        [
          'models.infer({})',
          'models.infer()',
          'models.infer(true)',
          "models.get('writer'):infer(print)",
          'messages:user({})',
          'messages:user()',
          'messages:system(true)',
          "messages:assistant(tools.get('web/fetch'))",
          'messages:user(42)',
          'messages[#messages].content',
        ],
        "models.use('writer')",
      ),
    ).toEqual([
      lua_('models.infer takes text, got table'),
      lua_('models.infer takes text, got nil'),
      lua_('models.infer takes text, got boolean'),
      lua_('models.infer takes text, got function'),
      lua_('messages:user takes text, got table'),
      lua_('messages:user takes text, got nil'),
      lua_('messages:system takes text, got boolean'),
      lua_('messages:assistant takes text, got userdata'),
      'ok',
      'ok',
    ]);
  });

  it('store functions take their path and text as strings', async () => {
    expect(
      await errorsOf([
        'store.read(42)',
        'store.read()',
        "store.write('a.txt', {})",
        "store.write(nil, 'text')",
        "store.append('a.txt', 1)",
        "store.append(true, 'x')",
        'store.list(7)',
        'store.delete()',
        "store.delete({ 'a.txt' })",
      ]),
    ).toEqual([
      lua_('store.read takes a path as a string, got integer'),
      lua_('store.read takes a path as a string, got nil'),
      lua_('store.write takes the text as a string, got table'),
      lua_('store.write takes a path as a string, got nil'),
      lua_('store.append takes the text as a string, got integer'),
      lua_('store.append takes a path as a string, got boolean'),
      lua_('store.list takes a prefix as a string, got integer'),
      lua_('store.delete takes a path as a string, got nil'),
      lua_('store.delete takes a path as a string, got table'),
    ]);
  });

  it('json.decode takes a string, json.array a table or nothing, untrusted text', async () => {
    expect(
      await errorsOf([
        'json.decode(42)',
        'json.decode()',
        'json.decode({})',
        "json.array('x')",
        'json.array(3)',
        'untrusted({})',
        'untrusted()',
        'untrusted(true)',
        'type(untrusted(42)) .. type(json.array()) .. type(json.array({}))',
      ]),
    ).toEqual([
      lua_('json.decode takes a string, got integer'),
      lua_('json.decode takes a string, got nil'),
      lua_('json.decode takes a string, got table'),
      lua_('json.array takes a table or nothing, got string'),
      lua_('json.array takes a table or nothing, got integer'),
      lua_('untrusted takes text, got table'),
      lua_('untrusted takes text, got nil'),
      lua_('untrusted takes text, got boolean'),
      'ok',
    ]);
  });

  it('jump, call and require take a heading reference', async () => {
    expect(await errorsOf(['jump(42)', 'jump()', 'call({})', 'call(true)', 'require(1.5)', 'require()'])).toEqual([
      lua_("jump takes a heading reference such as '## Next', got integer"),
      lua_("jump takes a heading reference such as '## Next', got nil"),
      lua_("call takes a heading reference such as '## Next', got table"),
      lua_("call takes a heading reference such as '## Next', got boolean"),
      lua_("require takes a heading reference such as '## Next', got number"),
      lua_("require takes a heading reference such as '## Next', got nil"),
    ]);
  });
});
