import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform, LuaVm } from '../../src/engine/lua/vm.ts';
import { newPlatform } from './helpers.ts';

let platform: LuaPlatform;
let chunks = 0;
beforeAll(async () => {
  platform = await newPlatform();
});

/**
 * Runs `calls` (Lua source of a list of {fn, args...} entries, `n` set) in a plain VM through
 * both the C pattern functions and the metered ones, and answers every difference in
 * results or error messages. Both are called from the same line, through the same local
 * name, so their messages carry the same position and function name.
 */
async function differences(calls: string): Promise<{ compared: number; report: string; found: number; errors: number }> {
  const vm: LuaVm = await platform.newVm({});
  try {
    vm.setPatternNatives('n_');
    // Named apart: the platform keeps compiled chunks by name.
    const source = DIFF_HARNESS.replace('CALLS', () => calls);
    const [compared, report, found, errors] = vm.runChunk({ name: `differential-${++chunks}`, source });
    return { compared: Number(compared), report: String(report), found: Number(found), errors: Number(errors) };
  } finally {
    vm.close();
  }
}

const DIFF_HARNESS = String.raw`
local C = { find = string.find, match = string.match, gmatch = string.gmatch, gsub = string.gsub }
local N = { find = n_find, match = n_match, gmatch = n_gmatch, gsub = n_gsub }
n_find, n_match, n_gmatch, n_gsub = nil, nil, nil, nil
-- The library's own table holds the functions being compared, as in the sandbox: Lua names
-- a function from there when the call site gives no name (this chunk is loaded stripped).
local function use(lib) string.find, string.match, string.gmatch, string.gsub = lib.find, lib.match, lib.gmatch, lib.gsub end

local function show(t)
  local out = {}
  for i = 1, t.n do
    local v = t[i]
    out[i] = type(v) == 'string' and string.format('%q', v) or (math.type(v) or type(v)) .. ':' .. tostring(v)
  end
  return table.concat(out, ', ')
end

local function call(f, ...) local r = table.pack(f(...)) return r end
local function iterate(f, ...)
  local it = f(...)
  local all = {}
  for _ = 1, 200 do
    local r = table.pack(it())
    all[#all + 1] = show(r)
    if r[1] == nil then break end
  end
  return { n = 1, table.concat(all, ' ; ') }
end

local function outcome(kind, f, ...)
  local ok, r = pcall(kind == 'gmatch' and iterate or call, f, ...)
  if not ok then return 'error: ' .. tostring(r) end
  return show(r)
end

local calls = CALLS
local bad, compared, found, errors = {}, 0, 0, 0
for i = 1, calls.n do
  local c = calls[i]
  local kind = c[1]
  use(C)
  local expected = outcome(kind, C[kind], table.unpack(c, 2, c.n))
  use(N)
  local got = outcome(kind, N[kind], table.unpack(c, 2, c.n))
  compared = compared + 1
  if expected:sub(1, 6) == 'error:' then errors = errors + 1 elseif expected ~= 'nil:nil' then found = found + 1 end
  if expected ~= got and #bad < 20 then
    local args = {}
    for k = 2, c.n do args[#args + 1] = type(c[k]) == 'string' and string.format('%q', c[k]) or tostring(c[k]) end
    bad[#bad + 1] = kind .. '(' .. table.concat(args, ', ') .. ')\n  C:   ' .. expected .. '\n  got: ' .. got
  end
end
return compared, table.concat(bad, '\n'), found, errors
`;

/** Lua source of a calls list, from entries written as Lua expressions. */
const list = (entries: string[]) => `(function() local t = { ${entries.map((e) => `{ n = select('#', ${e}), ${e} }`).join(',\n')} } t.n = #t return t end)()`;

describe('the metered pattern functions answer as the C ones do', () => {
  it("on the classic cases of Lua's pattern tests", async () => {
    const cases = [
      // find: plain, positions, init before, at and past the end, negative init
      `'find', '', ''`,
      `'find', 'alo', ''`,
      `'find', 'a\\0o a\\0o a\\0o', 'a', 1`,
      `'find', 'a\\0o a\\0o a\\0o', 'a\\0o', 2`,
      `'find', 'a\\0o a\\0o a\\0o', 'a\\0a', 1`,
      `'find', 'a\\0a\\0a\\0a\\0\\0ab', '\\0ab', 2`,
      `'find', 'a\\0a\\0a\\0a\\0\\0ab', 'b'`,
      `'find', 'a\\0a\\0a\\0a\\0\\0ab', 'b\\0'`,
      `'find', '', '\\0'`,
      `'find', 'alo123alo', '12'`,
      `'find', 'alo123alo', '^12'`,
      `'find', 'abc', '', 10`,
      `'find', 'abc', '', 4`,
      `'find', 'abc', '', 3`,
      `'find', 'abc', 'c', -1`,
      `'find', 'abc', 'a', -10`,
      `'find', 'abc', 'b', 0`,
      `'find', 'abc', 'b', 4294967298`,
      `'find', 'abc', 'b', 4294967296`,
      `'find', 'abc', 'b', math.mininteger`,
      `'find', 'abc', 'b', math.maxinteger`,
      `'find', 'a.b', '.', 1, true`,
      `'find', 'a+b', '+', 1, 1`,
      `'find', 'a+b', '+', 1, false`,
      `'find', 'a(b', '(', 1, true`,
      `'find', 12345, 34`,
      `'find', 'x', 'x', 1.0`,
      `'find', 'x', 'x', 1.5`,
      `'find', 'x', 'x', '1'`,
      `'find', 'x', 'x', 'one'`,
      `'find', nil, 'x'`,
      `'find', 'x', nil`,
      `'find', {}, 'x'`,
      `'find', 'x', {}`,
      `'find'`,
      // match: classes, sets, anchors, quantifiers
      `'match', 'aaab', '.*b'`,
      `'match', 'aaa', '.*$'`,
      `'match', 'aaa', 'b*'`,
      `'match', 'aaa', 'ab*a'`,
      `'match', 'aba', 'ab*a'`,
      `'match', 'aaab', 'a+'`,
      `'match', 'aaa', '^.+$'`,
      `'match', 'aaa', 'b+'`,
      `'match', 'aaa', 'ab+a'`,
      `'match', 'aba', 'ab+a'`,
      `'match', 'a$a', '.$'`,
      `'match', 'a$a', '.%$'`,
      `'match', 'a$a', '.$.'`,
      `'match', 'a$a', '$$'`,
      `'match', 'a$b', 'a$'`,
      `'match', 'a$a', '$'`,
      `'match', '', 'b*'`,
      `'match', 'aaa', 'bb*'`,
      `'match', 'aaab', 'a-'`,
      `'match', 'aaa', '^.-$'`,
      `'match', 'aabaaabaaabaaaba', 'b.*b'`,
      `'match', 'aabaaabaaabaaaba', 'b.-b'`,
      `'match', 'alo xo', '.o$'`,
      `'match', ' \\n isto é assim', '%S%S*'`,
      `'match', ' \\n isto é assim', '%S*$'`,
      `'match', ' \\n isto é assim', '[a-z]*$'`,
      `'match', 'um caracter ? extra', '[^%sa-z]'`,
      `'match', '', 'a?'`,
      `'match', 'á', 'á?'`,
      `'match', 'ábl', 'á?b?l?'`,
      `'match', '  ábl', 'á?b?l?'`,
      `'match', 'aa', '^aa?a?a'`,
      `'match', ']]]áb', '[^]]'`,
      `'match', '0alo alo', '%x*'`,
      `'match', 'alo alo', '%C+'`,
      `'match', 'a\\0b\\0c', '%z'`,
      `'match', 'a\\0b', '[%z]'`,
      `'match', '(álo)', '%(á'`,
      `'match', '==========', '^([=]*)=%1$'`,
      `'match', '==========', '^([=]*)=%2$'`,
      `'match', 'x', '%0'`,
      `'match', 'alo', '()'`,
      `'match', 'alo', '()()'`,
      `'match', 'alo', '(()a)'`,
      `'match', 'abc', '()(b)()'`,
      `'match', 'hello world', '^(h)(e)(l)(l)(o)'`,
      `'match', 'ab', '((a)(b))'`,
      `'match', 'ab', '(a'`,
      `'match', 'ab', 'a)'`,
      `'match', 'x', '%'`,
      `'match', 'x', '[a'`,
      `'match', 'x', '[]'`,
      `'match', 'x', '[^]'`,
      `'match', 'x', '[a%'`,
      `'match', ']', '[]]'`,
      `'match', 'x', '%b'`,
      `'match', 'x', '%bx'`,
      `'match', '((a)(b))c', '%b()'`,
      `'match', 'x(y(z)', '%b()'`,
      `'match', 'aaa', '%baa'`,
      `'match', 'x', '%f'`,
      `'match', 'THE (quick) fox', '%f[%a]%a+'`,
      `'match', 'THE (quick) fox', '%f[%l]%a+'`,
      `'match', 'abc', '%f[%z]'`,
      `'match', 'abc', '%f[^%z]'`,
      `'match', 'a', '%f[a]'`,
      `'match', 'a', '%f[^a]'`,
      `'match', 'aXb', '%f[%u].'`,
      `'match', 'abc', ('(a)'):rep(32)`,
      `'match', ('a'):rep(33), ('(a)'):rep(33)`,
      `'match', ('a'):rep(300), ('a?'):rep(300) .. ('a'):rep(300)`,
      `'match', ('a'):rep(250), ('(a)'):rep(1) .. ('.?'):rep(250)`,
      `'match', 'x', ('('):rep(250)`,
      `'match', 'abc', 'b', -1`,
      `'match', 'abc', '^b', 2`,
      `'match', 'a\\nb', '%c'`,
      `'match', 'a1_ ,', '%p'`,
      `'match', 'a1_ ,', '%W+'`,
      `'match', 'zZ9', '[%d%u]+'`,
      `'match', 'a-b', '[a-]+'`,
      `'match', 'a-b', '[-a]+'`,
      `'match', 'a]b', '[]a]+'`,
      `'match', 'b^a', '[a^]+'`,
      `'match', '\\255\\128', '[\\128-\\255]+'`,
      `'match', '\\200x', '%a'`,
      `'match', '\\200x', '%A'`,
      `'match', 'x', '%g'`,
      `'match', 'x', '%G'`,
      `'match', 'x', '%q'`,
      // gmatch: captures, empty matches, anchors that are not anchors, init
      `'gmatch', 'first second word', '%a+'`,
      `'gmatch', '13 14 10 = 11, 15= 16, 22=23', '(%d+)%s*=%s*(%d+)'`,
      `'gmatch', 'abc', '()'`,
      `'gmatch', 'abc', '.-'`,
      `'gmatch', 'aaa', 'a*'`,
      `'gmatch', '^a^a', '^a'`,
      `'gmatch', 'abcd', '()(.)', 3`,
      `'gmatch', 'abcd', '.', 10`,
      `'gmatch', 'abcd', '.', -2`,
      `'gmatch', 'x', '%'`,
      `'gmatch', 'x', '(()'`,
      `'gmatch', nil, 'x'`,
      `'gmatch', '', ''`,
      // gsub: strings, %0-%9, %%, numbers, tables, functions, counts, anchors, errors
      `'gsub', 'ülo ülo', 'ü', 'x'`,
      `'gsub', 'alo úlo  ', ' +$', ''`,
      `'gsub', '  alo alo  ', '^%s*(.-)%s*$', '%1'`,
      `'gsub', 'alo  alo  \\n 123\\n ', '%s+', ' '`,
      `'gsub', 'abc', '%w', '%1%0'`,
      `'gsub', 'abc', '%w+', '%0%1'`,
      `'gsub', 'áéí', '$', '\\0óú'`,
      `'gsub', '', '^', 'r'`,
      `'gsub', '', '$', 'r'`,
      `'gsub', 'um (dois) tres (quatro)', '(%(%w+%))', string.upper`,
      `'gsub', 'abc', '%w', '%%%0'`,
      `'gsub', 'abc', '%w', '%2'`,
      `'gsub', 'abc', '%w', '%'`,
      `'gsub', 'abc', '%w', '%x'`,
      `'gsub', 'abc', '(%w)', '%1%1', 2`,
      `'gsub', 'abc', '%w', 'x', 0`,
      `'gsub', 'abc', '%w', 'x', -1`,
      `'gsub', 'abc', '%w', 'x', 1.5`,
      `'gsub', 'abc', '', '-'`,
      `'gsub', 'abc', 'b*', '-'`,
      `'gsub', 'abc', '()', '%1'`,
      `'gsub', 'hello world', '(%w+)', '<%1>'`,
      `'gsub', 'hello', 'l', 7`,
      `'gsub', 'hello', 'l', 7.5`,
      `'gsub', 'hello', 'l', { l = 'L' }`,
      `'gsub', 'hello', '(l)(l)', { l = 1 }`,
      `'gsub', 'hello', 'l', { l = false }`,
      `'gsub', 'hello', 'l', { l = {} }`,
      `'gsub', 'hello', 'l', function() return nil end`,
      `'gsub', 'hello', 'l', function() return true end`,
      `'gsub', 'hello', 'l', function(x) return x .. x end`,
      `'gsub', 'hello', '()l()', function(a, b) return a + b end`,
      `'gsub', 'hello', 'l', function() error('inner') end`,
      `'gsub', 'hello', 'l'`,
      `'gsub', 'hello', 'l', true`,
      `'gsub', 'hello', '^h', 'H'`,
      `'gsub', 'hhh', '^h', 'H'`,
      `'gsub', 'abc', '%f[%w]', '|'`,
      `'gsub', 'f(a(b)c) g(d)', '%b()', '[]'`,
      `'gsub', 'x', '%', 'y'`,
      `'gsub', 'abc', '.', { a = 1, b = true }`,
      `'gsub', 'a b c', '%w', '%0 %0', 2`,
      `'gsub', 'a\\0b', '%z', '0'`,
      `'gsub', 'a\\0b', '\\0', '%%'`,
      `'gsub', 12345, 3, 9`,
    ];
    const { compared, report } = await differences(list(cases));
    expect(report).toBe('');
    expect(compared).toBe(cases.length);
  });

  it('on a generated corpus of patterns and subjects', async () => {
    // Patterns assembled from the grammar's pieces, over subjects of a small alphabet (so
    // matches happen), with high and NUL bytes: deterministic, thousands of calls.
    const generator = String.raw`(function()
      math.randomseed(14, 4)
      local atoms = { 'a', 'b', '.', '%a', '%d', '%s', '%w', '%p', '%A', '[ab]', '[^a]', '[a-c]', '[%d_]', '[]]', '%%', '%.', '\0', '\200',
        '[\128-\255]', '%f[%w]', '%f[^a]', '%bab', '%b()', '(', ')', '()', '%1', '%2', '$', '^', 'x' }
      local suffixes = { '', '', '', '*', '+', '-', '?' }
      local alphabet = { 'a', 'b', 'c', '1', ' ', '(', ')', '_', '\0', '\200', '.', '%' }
      local function pick(t) return t[math.random(#t)] end
      local t = {}
      for _ = 1, 4000 do
        local p = {}
        for _ = 1, math.random(0, 6) do p[#p + 1] = pick(atoms) .. pick(suffixes) end
        local s = {}
        for _ = 1, math.random(0, 12) do s[#s + 1] = pick(alphabet) end
        local pattern, subject = table.concat(p), table.concat(s)
        local init = math.random(-4, 14)
        local kinds = { 'find', 'match', 'gmatch', 'gsub' }
        local kind = pick(kinds)
        if kind == 'gsub' then
          local repl = pick({ '<%0>', '%1', '[%2]', '%%', 'x' })
          t[#t + 1] = { n = 4, kind, subject, pattern, repl }
        else
          t[#t + 1] = { n = 4, kind, subject, pattern, init }
        end
      end
      t.n = #t
      return t
    end)()`;
    const { compared, report, found, errors } = await differences(generator);
    expect(report).toBe('');
    expect(compared).toBe(4000);
    // The corpus exercises matches and malformed patterns alike.
    expect(found).toBeGreaterThan(1000);
    expect(errors).toBeGreaterThan(200);
  });
});
