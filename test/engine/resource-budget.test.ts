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
  ['gsub that multiplies', `local s = ('x'):rep(1000) while true do s = s:gsub('x', 'xx') end`],
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
