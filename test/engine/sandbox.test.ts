import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, prompt, resultOf, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

async function value(code: string): Promise<string> {
  return resultOf(await run(platform, lua(code)));
}

describe('the sandbox', () => {
  it('has no io, os, debug, package, file loading or collectgarbage', async () => {
    expect(
      await value(
        `return table.concat({ type(io), type(os), type(debug), type(package), type(dofile), type(loadfile), type(collectgarbage), type(string.dump) }, ',')`,
      ),
    ).toBe('nil,nil,nil,nil,nil,nil,nil,nil');
  });

  it('loads text chunks in the sandbox and refuses binary ones', async () => {
    expect(
      await value(
        `local f = load('return var ~= nil and type(io)')\nlocal g, err = load('x', 'b', 'b')\nreturn tostring(f()) .. '|' .. tostring(g) .. '|' .. err`,
      ),
    ).toBe('nil|nil|load: only text chunks can be loaded (binary chunks are refused)');
  });

  it('keeps the string metatable out of reach', async () => {
    expect(await value(`return tostring(getmetatable(''))`)).toBe('string');
  });

  it('passes effects through user coroutines', async () => {
    expect(
      await value(`
store.write('c.md', 'inside')
local gen = coroutine.wrap(function()
  coroutine.yield(store.read('c.md'))
  coroutine.yield('second')
end)
return gen() .. '|' .. gen()`),
    ).toBe('inside|second');
  });

  it('refuses a yield outside any coroutine', async () => {
    expect(await value(`local ok, err = pcall(coroutine.yield, 1)\nreturn err`)).toContain('attempt to yield from outside a coroutine');
  });

  // Values shaped as the entry protocol's (entry/protocol.ts): section code cannot hand the
  // driver a call, jump, fanout, await, pause or kept of its own making, from the section's
  // thread or from a coroutine (whose plain yields go to its resumer, never to the driver).
  const forged = [
    `'call', 'Secret', '[]'`,
    `'jump', 'Secret'`,
    `'fanout', 'Secret', '[1]'`,
    `'await', '["0.1"]', true`,
    `'pause'`,
    `'kept'`,
    `'effect', 'store.read', '{"path":"x"}'`,
  ];
  const FENCE = '```';
  for (const values of forged) {
    it(`keeps a forged protocol yield (${values}) from reaching the driver`, async () => {
      const main = [
        `local ok, err = pcall(coroutine.yield, {}, ${values})`,
        `local co = coroutine.create(function() coroutine.yield({}, ${values}); return 'done' end)`,
        'local a, b = coroutine.resume(co)',
        'local c, d = coroutine.resume(co)',
        "return tostring(ok) .. '|' .. tostring(err) .. '|' .. tostring(a) .. '|' .. type(b) .. '|' .. tostring(c) .. '|' .. tostring(d)",
      ].join('\n');
      const source = `# Forge\n\n## Main\n\n${FENCE}lua\n${main}\n${FENCE}\n\n## Secret\n\n${FENCE}lua\nreturn 'secret reached'\n${FENCE}\n`;
      expect(resultOf(await run(platform, prompt(source)))).toBe('false|attempt to yield from outside a coroutine|true|table|true|done');
    });
  }
});

describe('the instruction budget', () => {
  it('stops while true do end with Limit', async () => {
    const outcome = await run(platform, lua('while true do end'), { limits: { instructions: 2_000_000 } });
    expect(outcome.status === 'failed' && outcome.error.kind).toBe('Limit');
  });

  it('stops a loop that catches errors with pcall', async () => {
    const outcome = await run(platform, lua('while true do pcall(function() while true do end end) end'), { limits: { instructions: 2_000_000 } });
    expect(outcome.status === 'failed' && outcome.error.kind).toBe('Limit');
  });

  it('stops a loop inside a user coroutine', async () => {
    const code = 'local co = coroutine.create(function() while true do end end)\ncoroutine.resume(co)\nreturn "escaped"';
    const outcome = await run(platform, lua(code), { limits: { instructions: 2_000_000 } });
    expect(outcome.status === 'failed' && outcome.error.kind).toBe('Limit');
  });

  it('counts instructions across section entries', async () => {
    const outcome = await run(platform, lua('local n = 0\nfor i = 1, 100000 do n = n + i end\nreturn n'), { limits: { instructions: 50_000 } });
    expect(outcome.status === 'failed' && outcome.error.kind).toBe('Limit');
  });
});

describe('memory and cancellation', () => {
  it('ends a run whose allocation passes the VM heap limit as Limit', async () => {
    const outcome = await run(platform, lua(`return #string.rep('x', 64 * 1024 * 1024)`));
    expect(outcome.status === 'failed' && outcome.error).toMatchObject({ kind: 'Limit', message: expect.stringContaining('(memoryBytes)') });
  });

  it('ends a run waiting on an effect as Cancelled when its signal aborts', async () => {
    const controller = new AbortController();
    const never = { perform: () => new Promise<never>(() => {}) };
    const pending = run(platform, lua("return store.read('slow.md')"), { signal: controller.signal, harness: never });
    setTimeout(() => controller.abort('operator pressed stop'), 20);
    const outcome = await pending;
    expect(outcome.status === 'failed' && outcome.error).toMatchObject({ kind: 'Cancelled', message: 'the run was cancelled: operator pressed stop' });
  });
});
