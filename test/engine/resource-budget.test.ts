/**
 * The run-wide resource budget: what a VM really holds of the wasm heap, the Lua memory of a
 * run's VMs together, the platform's share between runs, the stack bound, and the caps on a
 * run's files, events and journal. Written as an attacker would write the prompts.
 */
import { describe, expect, it } from 'vitest';
import wasmoon from 'wasmoon';
import { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, prompt, resultOf, run } from './helpers.ts';

const platform = await newPlatform();

function failure(outcome: Awaited<ReturnType<typeof run>>) {
  if (outcome.status !== 'failed') throw new Error(`the run completed with ${outcome.result}`);
  return outcome.error;
}

const MEMORY_BOMBS: [string, string][] = [
  ['a table of growing strings', `local t = {} while true do t[#t+1] = ('x'):rep(1e6) .. #t end`],
  ['string.rep of a huge size', `return #string.rep('x', 1e9)`],
  ['string.rep with a separator', `return #string.rep('ab', 1e8, ',')`],
  ['table.concat of a huge list', `local t = {} for i = 1, 1e7 do t[i] = 'xxxxxxxxxx' end return #table.concat(t)`],
  ['a giant table of numbers', `local t = {} for i = 1, 1e8 do t[i] = i end`],
  ['a giant table of tables', `local t = {} for i = 1, 1e8 do t[i] = {i} end`],
  ['closures without end', `local fs = {} for i = 1, 1e8 do local x = i fs[i] = function() return x end end`],
  ['coroutines without end', `local cs = {} for i = 1, 1e8 do cs[i] = coroutine.create(function() end) end`],
  ['doubling a string', `local s = 'x' while true do s = s .. s end`],
  ['string.format padding', `local t = {} while true do t[#t+1] = string.format('%099d', #t):rep(1e4) end`],
  ['json.encode of a huge table', `local t = {} for i = 1, 2e5 do t[i] = ('y'):rep(100) end local parts = {} while true do parts[#parts+1] = json.encode(t) end`],
  ['string keys without end', `local t = {} for i = 1, 1e8 do t['key' .. i] = true end`],
];

const CATCHERS: [string, (bomb: string) => string][] = [
  ['bare', (bomb) => bomb],
  ['under pcall', (bomb) => `pcall(function() ${bomb} end) return 'caught'`],
  ['under pcall in a loop', (bomb) => `for i = 1, 100 do pcall(function() ${bomb} end) end return 'caught'`],
  ['under xpcall', (bomb) => `xpcall(function() ${bomb} end, function(e) return e end) return 'caught'`],
  ['inside a coroutine', (bomb) => `local co = coroutine.wrap(function() ${bomb} end) pcall(co) return 'caught'`],
  ['nested pcalls', (bomb) => `pcall(pcall, pcall, function() ${bomb} end) return 'caught'`],
];

describe('a memory bomb', () => {
  for (const [name, bomb] of MEMORY_BOMBS) {
    for (const [how, wrap] of CATCHERS) {
      it(`(${name}, ${how}) ends the run as Limit naming the memory limit`, async () => {
        const error = failure(await run(platform, lua(wrap(bomb))));
        expect(error.kind).toBe('Limit');
        expect(error.message).toMatch(/memory (limit|budget) of \d+ MiB \((memoryBytes|runMemoryBytes)\)/);
        expect(error.message).not.toContain('not enough memory');
      });
    }
  }

  it('leaves the platform able to run the next prompt', async () => {
    await run(platform, lua(MEMORY_BOMBS[0]![1]));
    expect(resultOf(await run(platform, lua(`return #string.rep('x', 1e6)`)))).toBe('1000000');
  });
});

describe('a prompt that uses memory legitimately', () => {
  it('sees what it saw before: big strings, big tables, garbage made and collected', async () => {
    const code = `
local total = 0
for round = 1, 40 do
  local t = {}
  for i = 1, 2000 do t[i] = ('z'):rep(200) .. i end
  total = total + #table.concat(t)
end
return total`;
    expect(resultOf(await run(platform, lua(code)))).toBe(String(40 * (2000 * 200 + [...Array(2000)].reduce((n, _, i) => n + String(i + 1).length, 0))));
  });

  it('can catch an error of its own under pcall and go on', async () => {
    expect(resultOf(await run(platform, lua(`local ok, e = pcall(error, 'mine') return tostring(ok) .. ':' .. e`)))).toBe('false:mine');
  });

  it('can fill most of its heap, let it go, and fill it again', async () => {
    const code = `
for round = 1, 6 do
  local t = {}
  for i = 1, 100 do t[i] = ('q'):rep(100000) .. i end
end
return 'ok'`;
    expect(resultOf(await run(platform, lua(code)))).toBe('ok');
  });
});

const RECURSIONS: [string, string][] = [
  ['plain recursion', `local function f() return 1 + f() end return f()`],
  ['recursion with arguments', `local function f(a, b, c) return f(a + 1, b, c) + 1 end return f(1, 2, 3)`],
  ['recursion with many locals', `local function f() local a, b, c, d, e, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u = 1 return f() + a end return f()`],
  ['mutual recursion', `local g local function f() return g() + 1 end g = function() return f() + 1 end return f()`],
  ['recursion through __index', `local t = setmetatable({}, {}) getmetatable(t).__index = function(_, k) return t[k] end return t.x`],
  ['recursion through __add', `local mt = {} mt.__add = function(a, b) return setmetatable({}, mt) + 1 end return setmetatable({}, mt) + 1`],
  ['recursion through pcall', `local function f() local ok, e = pcall(f) error(e, 0) end f()`],
  ['recursion in a coroutine', `local function f() return 1 + f() end local co = coroutine.wrap(f) return co()`],
  ['recursion through tostring', `local mt = {} mt.__tostring = function(x) return tostring(setmetatable({}, mt)) end return tostring(setmetatable({}, mt))`],
  ['recursion through string.gsub', `local function f(s) return (s:gsub('.', f)) end return f('ab')`],
  ['recursion with two hundred locals', `local function f() local ${Array.from({ length: 200 }, (_, i) => `a${i}`).join(', ')} = 1 return f() + a0 end return f()`],
  ['huge string.byte', `local s = ('x'):rep(5e6) return select('#', s:byte(1, -1))`],
  ['string.byte past the stack bound', `local s = ('x'):rep(1e6 + 10) return select('#', s:byte(1, -1))`],
];

describe('deep recursion', () => {
  for (const [name, code] of RECURSIONS) {
    it(`(${name}) ends as a Lua error that says stack overflow`, async () => {
      const error = failure(await run(platform, lua(code)));
      expect(error.kind).toBe('Lua');
      expect(error.message).toContain('stack overflow');
    });
  }

  it('(huge table.unpack) ends as the Lua error Lua gives', async () => {
    const error = failure(await run(platform, lua(`local t = {} return select('#', table.unpack(t, 1, 1e8))`)));
    expect(error).toMatchObject({ kind: 'Lua', message: expect.stringContaining('too many results to unpack') });
  });

  it('is an error pcall catches, after which the prompt goes on', async () => {
    const code = `local function f() return 1 + f() end local ok, e = pcall(f) return tostring(ok) .. ' ' .. tostring(e):match('stack overflow')`;
    expect(resultOf(await run(platform, lua(code)))).toBe('false stack overflow');
  });

  it('leaves recursion a few thousand deep alone', async () => {
    const code = `local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(20000)`;
    expect(resultOf(await run(platform, lua(code)))).toBe('20000');
  });
});
