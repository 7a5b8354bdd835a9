/**
 * wasmoon inside workerd: the factory, engines, and Lua run the way the Engine runs it.
 *
 * Chunks run on a thread of the test's own (load, resume, read, clear the stack), never
 * through `doString`, which leaks a stack slot per call (notes/wasmoon-in-workerd.md).
 */
import { createWorkerdLuaFactory } from '../../src/worker/workerd-lua/lua-factory.ts'; // first: src/worker/workerd-lua/README.md
import glue from 'wasmoon/dist/glue.wasm';
import { LuaEventMasks, LuaReturn, type LuaEngine, type LuaFactory, type LuaThread } from 'wasmoon';
import { beforeAll, describe, expect, it } from 'vitest';

/** What one resume of a runner's thread gave. */
type Outcome = { status: 'return'; values: unknown[] } | { status: 'yield'; values: unknown[] } | { status: 'error'; message: string };

/** Runs chunks on one thread of an engine and leaves its stack empty after each resume. */
class Runner {
  readonly thread: LuaThread;

  constructor(readonly engine: LuaEngine) {
    this.thread = engine.global.newThread();
  }

  /** Loads `source` as a text chunk and resumes it. */
  start(source: string): Outcome {
    this.thread.loadString(source);
    return this.resume();
  }

  /** Resumes the thread (after a yield) with `args` as the values of `coroutine.yield`. */
  resume(...args: unknown[]): Outcome {
    const { thread } = this;
    for (const arg of args) thread.pushValue(arg);
    const { result, resultCount } = thread.resume(args.length);
    try {
      if (result === LuaReturn.Ok || result === LuaReturn.Yield) {
        const top = thread.getTop();
        const values = Array.from({ length: resultCount }, (_, i) => thread.getValue(top - resultCount + 1 + i));
        return { status: result === LuaReturn.Ok ? 'return' : 'yield', values };
      }
      const message = thread.indexToString(-1);
      // A thread that raised is dead until reset. lua_resetthread returns the error status
      // again (so wasmoon's resetThread(), which asserts LUA_OK, would throw) and leaves
      // the error value, which setTop(0) clears. Hooks survive a reset.
      thread.lua.lua_resetthread(thread.address);
      return { status: 'error', message };
    } finally {
      thread.setTop(0);
    }
  }

  /** Runs `source` to its end and returns its values, or throws its error. */
  run(source: string): unknown[] {
    const outcome = this.start(source);
    if (outcome.status === 'return') return outcome.values;
    throw new Error(outcome.status === 'yield' ? 'chunk yielded' : outcome.message);
  }
}

let factory: LuaFactory;
const realInstantiate = WebAssembly.instantiate;
const realFetch = globalThis.fetch;

beforeAll(async () => {
  factory = await createWorkerdLuaFactory(glue);
});

describe('the workerd LuaFactory', () => {
  it('runs where compiling wasm from bytes is refused, as in production', () => {
    const bytes = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    expect(() => new WebAssembly.Module(bytes)).toThrow(/disallowed/);
  });

  it('is created once per isolate', async () => {
    expect(await createWorkerdLuaFactory(glue)).toBe(factory);
    expect((await factory.getLuaModule()).module).toBeDefined();
  });

  it('leaves no creation-time global behind but location and WebAssembly.Function', () => {
    expect(typeof process).toBe('object'); // the vitest pool runs with nodejs_compat
    expect('importScripts' in globalThis).toBe(false);
    expect(WebAssembly.instantiate).toBe(realInstantiate);
    expect(globalThis.fetch).toBe(realFetch);
    expect(typeof (WebAssembly as { Function?: unknown }).Function).toBe('function');
  });
});

describe('an engine with traceAllocations', () => {
  let engine: LuaEngine;
  let lua: Runner;

  beforeAll(async () => {
    engine = await factory.createEngine({ traceAllocations: true });
    lua = new Runner(engine);
  });

  it('allocates through its own allocator', () => {
    expect(engine.global.getMemoryUsed()).toBeGreaterThan(0);
  });

  it('does arithmetic', () => {
    expect(lua.run('return 1 + 2 * 3, 7 // 2, 2 ^ 10, 10 / 4, -7 % 3')).toEqual([7, 3, 1024, 2.5, 2]);
  });

  it('does string operations', () => {
    const source = `
      local s = string.format('%s-%03d', 'lua', 54)
      return s, s:upper(), string.rep('ab', 3, ','), #'héllo', ('a,b,,c'):gsub(',', ';')`;
    expect(lua.run(source)).toEqual(['lua-054', 'LUA-054', 'ab,ab,ab', 6, 'a;b;;c', 3]);
  });

  it('calls a JS function pushed to Lua', () => {
    engine.global.set('add', (a: number, b: number) => a + b);
    expect(lua.run('return add(40, 2)')).toEqual([42]);
  });

  it('yields to JS and is resumed from JS with values', () => {
    const source = `
      local x = coroutine.yield('first', 1)
      local y = coroutine.yield(x * 2)
      return x + y`;
    expect(lua.start(source)).toEqual({ status: 'yield', values: ['first', 1] });
    expect(lua.resume(10)).toEqual({ status: 'yield', values: [20] });
    expect(lua.resume(5)).toEqual({ status: 'return', values: [15] });
  });

  it('resumes after a Promise awaited by Lua settles', async () => {
    engine.global.set('later', (v: number) => Promise.resolve(v + 1));
    let outcome = lua.start('return later(41):await()');
    while (outcome.status === 'yield') {
      await outcome.values.at(-1);
      outcome = lua.resume();
    }
    expect(outcome).toEqual({ status: 'return', values: [42] });
  });

  it('stops an endless loop in a coroutine with a count hook that raises', () => {
    const source = `
      local co = coroutine.create(function() while true do end end)
      local calls = 0
      debug.sethook(co, function()
        calls = calls + 1
        if calls == 5 then error('budget exceeded') end
      end, '', 1000)
      local ok, err = coroutine.resume(co)
      return ok, err, calls, coroutine.status(co)`;
    const [ok, err, calls, status] = lua.run(source);
    expect(ok).toBe(false);
    expect(err).toMatch(/budget exceeded$/);
    expect([calls, status]).toEqual([5, 'dead']);
  });

  it('stops an endless chunk with a count hook set from JS, and runs on after a reset', () => {
    const { lua: wasm, address } = lua.thread;
    let calls = 0;
    const hook = wasm.module.addFunction((L: number) => {
      calls += 1;
      wasm.lua_pushstring(L, 'instruction budget exceeded');
      wasm.lua_error(L);
    }, 'vii');
    try {
      wasm.lua_sethook(address, hook, LuaEventMasks.Count, 1000);
      const outcome = lua.start('while true do end');
      expect(outcome).toEqual({ status: 'error', message: 'instruction budget exceeded' });
      expect(calls).toBe(1);
    } finally {
      // A reset keeps the hook; clear it before the thread runs anything else.
      wasm.lua_sethook(address, null, 0, 0);
      wasm.module.removeFunction(hook);
    }
    expect(lua.run('return "alive"')).toEqual(['alive']);
  });

  it('gives the same math.random values as Node after math.randomseed', () => {
    // Measured in Node 20 with wasmoon 1.16.0: math.randomseed(42), then three draws.
    expect(lua.run('math.randomseed(42); return math.random(1, 1000), math.random(1, 1000), math.random(1, 1000)')).toEqual([742, 50, 332]);
  });

  it('keeps the main stack of the engine at the runner thread alone', () => {
    expect(engine.global.getTop()).toBe(1);
    expect(lua.thread.getTop()).toBe(0);
  });
});

describe('many engines in one isolate', () => {
  it('creates and closes 500 engines without breaking later ones', async () => {
    const survivor = new Runner(await factory.createEngine({ traceAllocations: true }));
    survivor.run('kept = { 1, 2, 3 }');

    const count = 500;
    for (let i = 0; i < count; i += 1) {
      const engine = await factory.createEngine({ traceAllocations: true });
      expect(new Runner(engine).run(`return ${i} * 2`)).toEqual([i * 2]);
      engine.global.close();
    }

    const later = new Runner(await factory.createEngine({ traceAllocations: true }));
    expect(later.run('return string.rep("x", 1000):len(), kept == nil')).toEqual([1000, true]);
    expect(survivor.run('return #kept, kept[3]')).toEqual([3, 3]);
    later.engine.global.close();
    survivor.engine.global.close();
  });
});
