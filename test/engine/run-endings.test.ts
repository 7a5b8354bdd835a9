/**
 * Only the Engine decides how a run ends: a table Lua raised, whatever its kind, ends the run
 * as Lua; the Engine's own error values keep their kind when re-raised; var's size cap ends
 * the run as Limit, past any pcall.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

async function failure(code: string, options: Parameters<typeof run>[2] = {}) {
  const outcome = await run(platform, lua(code), options);
  if (outcome.status !== 'failed') throw new Error(`expected a failure, got ${outcome.result}`);
  return outcome.error;
}

const RUN_KINDS = ['Frontmatter', 'Prompt', 'RequirementsUnmet', 'Lua', 'Tool', 'Model', 'Store', 'Determinism', 'Cancelled', 'Limit'];
const LUA_KINDS = ['lua', 'tool', 'unbound_tool', 'out_of_scope_tool', 'store', 'model', 'cancelled', 'limit', 'determinism', 'context'];
const ODD_KINDS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', ''];
const EVERY_KIND = [...RUN_KINDS, ...RUN_KINDS.map((k) => k.toUpperCase()), ...RUN_KINDS.map((k) => k.toLowerCase()), ...LUA_KINDS, ...ODD_KINDS];

describe('a table Lua code raises', () => {
  it.each(EVERY_KIND)('with kind %j ends the run as Lua, with its message', async (kind) => {
    const e = await failure(`error({ kind = ${JSON.stringify(kind)}, message = 'forged' })`);
    expect(e).toMatchObject({ kind: 'Lua', message: 'forged' });
  });

  it.each(['cancelled', 'Cancelled', 'limit', 'Limit', 'determinism', 'Determinism', 'tool', '__proto__'])(
    'with kind %j and no message ends as Lua, naming the kind',
    async (kind) => {
      const e = await failure(`error({ kind = ${JSON.stringify(kind)} })`);
      expect(e).toEqual(expect.objectContaining({ kind: 'Lua', message: `a table was raised as an error (kind ${kind})` }));
    },
  );

  it.each([
    ['a number kind', "error({ kind = 42, message = 'm' })", 'm'],
    ['a table kind', "error({ kind = { 'Cancelled' }, message = 'm' })", 'm'],
    ['a boolean kind', 'error({ kind = true })', 'a table was raised as an error'],
    ['a table message', "error({ kind = 'Limit', message = {} })", 'a table was raised as an error (kind Limit)'],
    [
      'a kind table with a __tostring',
      "error({ kind = setmetatable({}, { __tostring = function() return 'Cancelled' end }) })",
      'a table was raised as an error',
    ],
    ['a __tostring message', "error(setmetatable({ kind = 'Cancelled' }, { __tostring = function() return 'from tostring' end }))", 'from tostring'],
    [
      'a __tostring that raises',
      "error(setmetatable({ kind = 'Limit' }, { __tostring = function() error('no') end }))",
      'a table was raised as an error (kind Limit)',
    ],
    [
      'a __tostring that returns a table',
      "error(setmetatable({ kind = 'Limit' }, { __tostring = function() return {} end }))",
      'a table was raised as an error (kind Limit)',
    ],
    ['an __index that answers every field', "error(setmetatable({}, { __index = function() return 'Cancelled' end }))", 'a table was raised as an error'],
    ['a locked metatable', "error(setmetatable({ kind = 'Cancelled', message = 'locked' }, { __metatable = false }))", 'locked'],
    ['an __eq that equals everything', "error(setmetatable({ kind = 'Cancelled', message = 'eq' }, { __eq = function() return true end }))", 'eq'],
  ])('with %s ends as Lua', async (_, code, message) => {
    const e = await failure(code);
    expect(e).toMatchObject({ kind: 'Lua', message });
  });

  it('cannot take the metatable of a real error value (it is locked), and ends as Lua', async () => {
    const code = `local ok, real = pcall(store.read, 'missing.md')\nlocal mt = getmetatable(real)\nif type(mt) == 'table' then error(setmetatable({ kind = 'cancelled', message = 'copied' }, mt)) end\nerror({ kind = 'cancelled', message = 'locked: ' .. tostring(mt) })`;
    expect(await failure(code)).toMatchObject({ kind: 'Lua', message: 'locked: runvil.error' });
  });

  it('ends as Lua when it copies a real error value field by field', async () => {
    const code = `local ok, real = pcall(store.read, 'missing.md')\nlocal copy = {}\nfor k, v in pairs(real) do copy[k] = v end\nerror(copy)`;
    expect(await failure(code)).toMatchObject({ kind: 'Lua' });
  });

  it('ends as Lua when raised from a called section', async () => {
    const body = "# T\n\n## A\n\n```lua\ncall('## B')\n```\n\n## B\n\n```lua\nerror({ kind = 'cancelled', message = 'from B' })\n```\n";
    const { prompt } = await import('./helpers.ts');
    const outcome = await run(platform, prompt(body));
    expect(outcome.status === 'failed' && outcome.error).toMatchObject({ kind: 'Lua', message: 'from B' });
  });

  it('keeps its fields for a pcall that catches it', async () => {
    const outcome = await run(platform, lua("local ok, e = pcall(error, { kind = 'Cancelled', message = 'm' })\nreturn tostring(ok) .. e.kind .. e.message"));
    expect(outcome.status === 'completed' && outcome.result).toBe('falseCancelledm');
  });
});

describe("the Engine's own error values re-raised", () => {
  it('keep Store for a store failure raised again with error(err)', async () => {
    const e = await failure("local ok, err = pcall(store.read, 'missing.md')\nerror(err)");
    expect(e.kind).toBe('Store');
  });

  it('keep Store however Lua changes their kind field', async () => {
    for (const kind of ['cancelled', 'Cancelled', 'limit', 'Limit', 'determinism', '__proto__', 'lua']) {
      const e = await failure(`local ok, err = pcall(store.read, 'missing.md')\nerr.kind = ${JSON.stringify(kind)}\nerror(err)`);
      expect(e.kind).toBe('Store');
    }
  });

  it('keep Tool for an unknown tool re-raised, and its message', async () => {
    const e = await failure("local ok, err = pcall(tools.call, 'nope', {})\nerror(err, 0)");
    expect(e.kind).toBe('Tool');
    expect(e.message).toMatch(/^tool "nope" is not a tool in this run/);
  });

  it('keep their kind through a coroutine that raises them', async () => {
    const e = await failure("local co = coroutine.wrap(function() store.read('missing.md') end)\nco()");
    expect(e.kind).toBe('Store');
  });
});

describe("var's size cap", () => {
  const small = { limits: { varBytes: 64 * 1024 } };

  it('ends a run whose var keeps growing with Limit, naming the cap', async () => {
    const e = await failure("local i = 0\nwhile true do i = i + 1; var['k' .. i] = string.rep('x', 100) end", small);
    expect(e).toEqual({ kind: 'Limit', message: "the run's var grew past its size limit of 64 KiB of JSON" });
  });

  it('ends the run as Limit even when the write is inside a pcall', async () => {
    const e = await failure("local ok = pcall(function() var.big = string.rep('x', 70000) end)\nreturn 'caught: ' .. tostring(ok)", small);
    expect(e.kind).toBe('Limit');
  });

  it('ends the run as Limit for a list that grows one item at a time, even in a coroutine', async () => {
    const e = await failure('var.l = {}\nlocal co = coroutine.wrap(function() for i = 1, 1e9 do var.l[i] = i end end)\nlocal ok = pcall(co)', small);
    expect(e.kind).toBe('Limit');
  });

  it('ends the run as Limit for a nested table assigned whole', async () => {
    const e = await failure("local t = {}\nfor i = 1, 5000 do t[i] = { name = 'item ' .. i, tags = { 'a', 'b' } } end\nvar.t = t", small);
    expect(e.kind).toBe('Limit');
  });

  it('counts multi-byte text by its UTF-8 bytes', async () => {
    const e = await failure("var.s = string.rep('é', 40000)", small);
    expect(e.kind).toBe('Limit');
  });

  it('lets a var that stays under the cap be rewritten again and again', async () => {
    const outcome = await run(
      platform,
      lua("for i = 1, 300 do var.x = string.rep('y', 30000); var.x = nil; var.l = { i, i }; var.l[3] = 'z'; var.l[3] = nil end\nreturn json.encode(var)"),
      small,
    );
    expect(outcome.status === 'completed' && outcome.result).toBe('{"l":[300,300]}');
  });

  it('frees what removed keys held', async () => {
    const outcome = await run(
      platform,
      lua(
        "for i = 1, 50 do var['k' .. i] = string.rep('x', 1000) end\nfor i = 1, 50 do var['k' .. i] = nil end\nfor i = 1, 50 do var['j' .. i] = string.rep('x', 1000) end\nreturn 'ok'",
      ),
      small,
    );
    expect(outcome.status === 'completed' && outcome.result).toBe('ok');
  });

  it('is 8 MiB by default', async () => {
    const e = await failure("local chunk = string.rep('x', 1024 * 1024)\nfor i = 1, 9 do var['c' .. i] = chunk end");
    expect(e).toEqual({ kind: 'Limit', message: "the run's var grew past its size limit of 8 MiB of JSON" });
  });
});
