import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, resultOf, run } from './helpers.ts';

// Lua runs __gc finalizers, and an xpcall handler called from the count hook, with hooks
// off; the C pattern matcher cannot be interrupted. Each of these once froze the isolate:
// here every attempt ends with Limit within a small budget, or is refused, or cancelled.

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const SMALL = { limits: { instructions: 2_000_000 } };

async function value(code: string): Promise<string> {
  return resultOf(await run(platform, lua(code), SMALL));
}

async function kindOf(code: string, options: Parameters<typeof run>[2] = SMALL): Promise<string> {
  const outcome = await run(platform, lua(code), options);
  return outcome.status === 'failed' ? outcome.error.kind : `completed: ${outcome.status === 'completed' ? outcome.result : ''}`;
}

const REFUSED = 'a metatable with a __gc field cannot be set';
// Garbage enough for several full collections of a section VM's heap.
const CHURN = 'for i = 1, 20000 do local t = { i, tostring(i) } end';

describe('setmetatable refuses a finalizer', () => {
  for (const [what, gc] of [
    ['a function', 'function() while true do end end'],
    ['true', 'true'],
    ['false', 'false'],
    ['a table with __call', 'setmetatable({}, { __call = function() while true do end end })'],
    ['a string', "'spin'"],
  ]) {
    it(`when __gc is ${what}`, async () => {
      expect(await value(`local ok, err = pcall(setmetatable, {}, { __gc = ${gc} })\nreturn tostring(ok) .. ' ' .. err`)).toContain(
        `false setmetatable: ${REFUSED}`,
      );
    });
  }

  it('with the position of the call that tried', async () => {
    const outcome = await run(platform, lua(`local x = 1\nsetmetatable({}, { __gc = print })`), SMALL);
    expect(outcome.status === 'failed' && outcome.error.message).toMatch(/^test\.md:\d+: setmetatable: a metatable with a __gc field/);
  });

  it('inside a coroutine, a function loaded with its own env, and on json.decode tables', async () => {
    expect(
      await value(`
local co = coroutine.wrap(function() return pcall(setmetatable, {}, { __gc = print }) end)
local a = select(2, co())
local f = load("return pcall(setmetatable, {}, { __gc = print })", 'x', 't', { setmetatable = setmetatable, pcall = pcall, print = print })
local b = select(2, f())
local c = select(2, pcall(setmetatable, json.decode('{"a":1}'), { __gc = print }))
return a .. '|' .. b .. '|' .. c`),
    ).toBe(Array(3).fill(`setmetatable: ${REFUSED} (a finalizer would run outside the run's instruction budget)`).join('|'));
  });

  it("and a __gc reached through the metatable's __index never runs", async () => {
    expect(
      await value(`
local ran = false
local holder = { __gc = function() ran = true; while true do end end }
for i = 1, 200 do setmetatable({}, setmetatable({}, { __index = holder })) end
${CHURN}
return tostring(ran)`),
    ).toBe('false');
  });

  it('and a __gc added to the metatable later never runs', async () => {
    expect(
      await value(`
local ran = false
for i = 1, 200 do
  local mt = {}
  setmetatable({}, mt)
  if i % 2 == 0 then rawset(mt, '__gc', function() ran = true; while true do end end) else mt.__gc = function() ran = true end end
end
${CHURN}
return tostring(ran)`),
    ).toBe('false');
  });

  it("and the runtime's shared metatables are out of reach", async () => {
    expect(
      await value(`
local ok, err = pcall(store.read, 42)
local ok2, stop = pcall(function() return getmetatable(json.null) end)
return type(getmetatable(err)) .. ',' .. type(getmetatable('')) .. ',' .. tostring(getmetatable('').__gc) .. ',' .. type(stop)`),
    ).toBe('string,string,nil,nil');
  });

  it("and an error value's metatable cannot lend later errors a finalizer", async () => {
    expect(
      await value(`
local ran = false
local _, err = pcall(store.read, 42)
local mt = getmetatable(err)
pcall(function() mt.__gc = function() ran = true; while true do end end end)
for i = 1, 300 do pcall(store.read, i) end
${CHURN}
return tostring(ran)`),
    ).toBe('false');
  });
});

describe("the budget's stop never runs a handler unmetered", () => {
  const handlers: [string, string][] = [
    ['loops', 'xpcall(function() while true do end end, function(e) while true do end end)'],
    [
      'nests another xpcall',
      'xpcall(function() while true do end end, function(e) return xpcall(function() while true do end end, function() while true do end end) end)',
    ],
    ['calls pcall on a loop', 'xpcall(function() while true do end end, function(e) pcall(function() while true do end end) while true do end end)'],
    ['loops in a coroutine', 'xpcall(function() while true do end end, function(e) local co = coroutine.wrap(function() while true do end end) co() end)'],
    ['swaps the error and loops again', 'while true do xpcall(function() while true do end end, function(e) return "caught" end) end'],
    ['errors itself', 'xpcall(function() while true do end end, function(e) error({}) end)'],
    [
      'runs inside a coroutine',
      'local co = coroutine.create(function() xpcall(function() while true do end end, function() while true do end end) end)\ncoroutine.resume(co)\nwhile true do end',
    ],
    ['loops after a store effect', "xpcall(function() store.write('a.md', 'x') while true do end end, function() while true do end end)"],
  ];
  for (const [what, code] of handlers) {
    it(`ends with Limit when the handler ${what}`, async () => {
      expect(await kindOf(code)).toBe('Limit');
    });
  }

  it('refuses a handler that is not a function, as Lua does', async () => {
    expect(await kindOf('xpcall(function() while true do end end, setmetatable({}, { __call = function() while true do end end }))')).toBe('Lua');
  });

  it("keeps xpcall's own answers for ordinary errors", async () => {
    expect(
      await value(`
local a = table.pack(xpcall(function() error('boom', 0) end, function(e) return 'handled ' .. e end))
local b = table.pack(xpcall(function(x, y) return x + y end, print, 2, 3))
local c = select(2, pcall(xpcall, function() end, nil))
return tostring(a[1]) .. ' ' .. a[2] .. '|' .. tostring(b[1]) .. ' ' .. b[2] .. '|' .. c`),
    ).toBe("false handled boom|true 5|bad argument #2 to 'xpcall' (function expected, got nil)");
  });

  it("ends with Limit when a coroutine's __close would loop as it is closed after the stop", async () => {
    expect(
      await kindOf(`
local co = coroutine.create(function()
  local guard <close> = setmetatable({}, { __close = function() while true do end end })
  while true do end
end)
coroutine.resume(co)
coroutine.close(co)
while true do end`),
    ).toBe('Limit');
  });

  it('ends with Limit when a to-be-closed variable loops as the stop unwinds', async () => {
    expect(
      await kindOf(`
local guard <close> = setmetatable({}, { __close = function() while true do end end })
while true do end`),
    ).toBe('Limit');
  });

  it('does not let pcall or coroutine.resume hand the stop to section code', async () => {
    expect(
      await kindOf(`
local seen = {}
for i = 1, 1000 do
  local co = coroutine.create(function() while true do end end)
  local ok, err = coroutine.resume(co)
  seen[#seen + 1] = err
  local ok2, err2 = pcall(function() while true do end end)
  seen[#seen + 1] = err2
end
return tostring(#seen)`),
    ).toBe('Limit');
  });

  it('is heard at once when the run is cancelled while a handler would loop', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort('operator pressed stop'), 50);
    expect(
      await kindOf('while true do xpcall(function() for i = 1, 1e5 do end error("x") end, function(e) for i = 1, 1e5 do end return e end) end', {
        signal: controller.signal,
      }),
    ).toBe('Cancelled');
  });
});

describe('pattern matching is charged to the budget', () => {
  const backtracking: [string, string][] = [
    ["a*a*...b over a's", "return string.find(('a'):rep(60), ('a*'):rep(12) .. 'b')"],
    ['the method form', "return (('a'):rep(60)):find(('a*'):rep(12) .. 'b')"],
    ['match with lazy captures', "return (('a'):rep(300)):match(('(.-)'):rep(9) .. 'x')"],
    ['anchored', "return string.match(('a'):rep(60), '^' .. ('a*'):rep(12) .. 'b')"],
    ['position captures', "return string.find(('a'):rep(60), ('()a*'):rep(12) .. 'b')"],
    ['nested captures', "return string.match(('a'):rep(60), ('(a*(a*))'):rep(6) .. 'b')"],
    ['%b over unbalanced text', "return (('('):rep(20000)):gsub('%b()', '')"],
    ['%f frontiers', "return string.find(('a'):rep(60), '%f[a]' .. ('a*'):rep(12) .. 'b')"],
    ['gmatch over a long subject', "local n = 0 for w in (('a'):rep(200000)):gmatch('a-b') do n = n + 1 end return n"],
    ['gsub with a table replacement', "return (('a'):rep(60)):gsub(('a*'):rep(12) .. 'b', {})"],
    ['gsub with a function replacement that loops', "return ('abc'):gsub('%w', function() while true do end end)"],
    ['a plain find that is quadratic', "local s = ('a'):rep(200000) return s:find(('a'):rep(100000) .. 'b', 1, true)"],
    ['a pattern without specials that is quadratic', "local s = ('a'):rep(200000) return s:find(('a'):rep(100000) .. 'b')"],
    ['init beyond a start', "return string.find(('a'):rep(80), ('a*'):rep(12) .. 'b', 10)"],
    ['a loop of modest patterns', "while true do string.find(('a'):rep(40), ('a*'):rep(4) .. 'b') end"],
    ['a pattern in pcall in a loop', "while true do pcall(string.find, ('a'):rep(60), ('a*'):rep(12) .. 'b') end"],
    ['a pattern in an xpcall whose handler loops', "xpcall(string.find, function() while true do end end, ('a'):rep(60), ('a*'):rep(12) .. 'b')"],
    ['a pattern in a coroutine', "local co = coroutine.wrap(function() return string.find(('a'):rep(60), ('a*'):rep(12) .. 'b') end) return co()"],
    [
      "a pattern through the runtime's string table in a prelude-free load",
      "return load(\"return ('a'):rep(60):find(('a*'):rep(12) .. 'b')\", 'x', 't', {})()",
    ],
  ];
  for (const [what, code] of backtracking) {
    it(`ends a run with Limit: ${what}`, async () => {
      expect(await kindOf(code)).toBe('Limit');
    });
  }

  it('is heard when the run is cancelled between pattern calls', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort('operator pressed stop'), 50);
    expect(await kindOf("while true do string.find(('a'):rep(40), ('a*'):rep(4) .. 'b') end", { signal: controller.signal })).toBe('Cancelled');
  });

  it('answers ordinary calls as Lua does', async () => {
    expect(
      await value(`
local out = {}
out[#out + 1] = table.concat({ ('key = value'):match('^(%w+)%s*=%s*(%w+)$') }, ',')
out[#out + 1] = select(2, ('a,b,,c'):gsub(',', ';'))
for k, v in string.gmatch('a=1, b=2', '(%w+)=(%w+)') do out[#out + 1] = k .. v end
out[#out + 1] = table.concat({ string.find('hello', 'l+') }, ',')
out[#out + 1] = select(2, pcall(string.rep))
out[#out + 1] = select(2, pcall(function() return ('x'):find('%') end))
return table.concat(out, '|')`),
    ).toMatch(
      /^key,value\|3\|a1\|b2\|3,4\|bad argument #1 to 'string.rep' \(string expected, got no value\)\|test.md:\d+: malformed pattern \(ends with '%'\)$/,
    );
  });
});

describe('the string library behind strings', () => {
  it('has no dump, through any path', async () => {
    expect(
      await value(`
return table.concat({ tostring(('').dump), tostring(string.dump), tostring(getmetatable('').dump), tostring(('x').dump),
  tostring(load("return ('').dump", 'x', 't', {})()), type(getmetatable('')), tostring(rawget(string, 'dump')) }, ',')`),
    ).toBe('nil,nil,nil,nil,nil,string,nil');
  });

  it('gives strings the metered pattern functions as methods', async () => {
    expect(
      await value(`return tostring(('').find == string.find and ('').gsub == string.gsub and ('').match == string.match and ('').gmatch == string.gmatch)`),
    ).toBe('true');
  });

  it('cannot be changed from section code for the runtime, but finds functions section code adds', async () => {
    expect(
      await value(`
string.sub = function() return 'forged' end
function string.shout(s) return s:upper() .. '!' end
local ok = pcall(function() getmetatable('').__index = {} end)
return ('abc'):sub(1, 1) .. '|' .. ('hi'):shout() .. '|' .. tostring(ok)`),
    ).toBe('a|HI!|false');
  });
});

describe('library loops that no memory bound ends', () => {
  it('string.rep of nothing answers the empty string at once, whatever the count', async () => {
    expect(await value("return '[' .. string.rep('', 1e15) .. ('' ):rep(2^62, '') .. string.rep('', '1e12') .. ']' .. string.rep('ab', 3, ',')")).toBe(
      '[]ab,ab,ab',
    );
  });

  it("string.rep keeps Lua's messages", async () => {
    expect(
      await value(`
local a = select(2, pcall(string.rep, '', 'x'))
local b = select(2, pcall(function() return ('x'):rep({}) end))
local c = select(2, pcall(string.rep, '', 1.5))
return a .. '|' .. b:gsub('^test.md:%d+: ', '') .. '|' .. c`),
    ).toBe(
      "bad argument #2 to 'string.rep' (number expected, got string)|bad argument #1 to 'rep' (number expected, got table)|bad argument #2 to 'string.rep' (number has no integer representation)",
    );
  });

  for (const [what, code] of [
    ['over absent elements', 'return #table.move({}, 1, 1e12, 1)'],
    ['into another table', 'return #table.move({}, 1, math.maxinteger - 1, 1, {})'],
    ['in a pcall in a loop', 'while true do pcall(table.move, {}, 1, 1e8, 2) end'],
  ] as [string, string][]) {
    it(`table.move charges its range: ${what}`, async () => {
      expect(await kindOf(code)).toBe('Limit');
    });
  }

  it('table.move moves as Lua does', async () => {
    expect(
      await value(`
local t = table.move({ 1, 2, 3 }, 1, 3, 2)
local u = table.move({ 'a', 'b' }, 1, 2, 1, { 'x', 'y', 'z' })
return table.concat(t, ',') .. '|' .. table.concat(u, ',') .. '|' .. select(2, pcall(table.move, {}, 1))`),
    ).toBe("1,1,2,3|a,b,z|bad argument #3 to 'table.move' (number expected, got no value)");
  });
});
