import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, resultOf, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

// The count hook pauses an entry every million instructions so other chains get their turn;
// a pause must never show in what the entry's own code sees.
describe('an entry the count hook pauses', () => {
  it('keeps a user coroutine’s own empty yield a yield', async () => {
    const outcome = await run(
      platform,
      lua(`local x = 0
for i = 1, 3000000 do x = x + 1 end
local co = coroutine.wrap(function() coroutine.yield() return 'second' end)
local first = co()
return tostring(first) .. '|' .. co()`),
    );
    expect(resultOf(outcome)).toBe('nil|second');
  });

  it('runs a long computation inside a coroutine to its end', async () => {
    const outcome = await run(
      platform,
      lua(`local co = coroutine.create(function()
  local x = 0
  for i = 1, 3000000 do x = x + 1 end
  coroutine.yield(x)
  return 'done'
end)
local _, a = coroutine.resume(co)
local _, b = coroutine.resume(co)
return a .. '|' .. b .. '|' .. coroutine.status(co)`),
    );
    expect(resultOf(outcome)).toBe('3000000|done|dead');
  });

  it('goes on where a pause cannot yield, as in a table.sort comparator', async () => {
    const outcome = await run(
      platform,
      lua(`local t = { 5, 3, 9, 1 }
table.sort(t, function(a, b)
  local co = coroutine.wrap(function() for i = 1, 400000 do end return true end)
  co()
  for i = 1, 200000 do end
  return a < b
end)
return table.concat(t, ',')`),
    );
    expect(resultOf(outcome)).toBe('1,3,5,9');
  });
});
