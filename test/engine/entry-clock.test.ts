/**
 * The wall-clock limit per section entry (a host's option; the command line's
 * --entry-timeout): an entry that computes longer ends the run with Limit, whatever it
 * computes (Lua, or C that the instruction budget does not see), while time spent waiting on
 * effects does not count.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createHarness, servicesOf } from '../../src/host/harness.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import type { Harness } from '../../src/engine/effects.ts';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, prompt, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const limit = (seconds: number) => ({ seconds, now: () => performance.now() });
/** A budget no test here reaches: only the clock stops these runs. */
const UNBOUNDED = { instructions: 1e13 };

/**
 * A Harness with the real clock, whose every effect takes `delayMs` to answer. With 0 it
 * answers without a timer: a timer's own delay on a loaded machine would be a wait the limit
 * does not count, and computeFor's many clock reads would then add up to less than the limit.
 */
function slowHarness(delayMs: number): Harness {
  const inner = createHarness({
    runId: 'run-1',
    store: new MemoryRunStore(),
    packs: new Map(),
    services: servicesOf(),
    operator: new ScriptedOperator([]),
    models: { provider: () => 'no models here' },
    clock: () => Date.now(),
  });
  return {
    async perform(request, context) {
      if (delayMs > 0) await sleep(delayMs);
      return inner.perform(request, context);
    },
  };
}

/** Lua that computes for about `ms` of wall clock, reading the clock through sys.now() (an effect, which does not count). */
const computeFor = (ms: number) => `do local t0 = sys.now(); while sys.now() - t0 < ${ms} do for i = 1, 300000 do end end end`;

const LIMITED = `section "Only" computed for more than 0.3 s of wall clock in one entry (the entry time limit, --entry-timeout; waits on tools, models and the operator do not count)`;

describe('an entry that computes past its wall-clock limit', () => {
  const spinners: [string, string][] = [
    ['an endless Lua loop', 'while true do end'],
    ['an endless loop inside pcall', 'while true do pcall(function() for i = 1, 1000 do end end) end'],
    ['an endless loop in a coroutine', 'local co = coroutine.wrap(function() while true do end end) co()'],
    [
      'table.sort over and over (C work the instruction budget hardly sees)',
      'local t = {} for i = 1, 50000 do t[i] = (i * 7919) % 50021 end while true do table.sort(t) table.sort(t, function(a, b) return a > b end) end',
    ],
    ['a loop that catches every error', 'while true do pcall(error, "again") end'],
  ];
  // Loops of long C calls that run few Lua instructions reach the count hook seldom: the
  // command line's supervisor stops those (test/cli/entry-timeout.test.ts).
  for (const [what, block] of spinners) {
    it(`ends the run with Limit: ${what}`, async () => {
      const outcome = await run(platform, lua(block), { limits: UNBOUNDED, entryTimeLimit: limit(0.3) });
      expect(outcome.status).toBe('failed');
      expect(outcome.status === 'failed' && outcome.error).toMatchObject({ kind: 'Limit', message: LIMITED });
    });
  }

  it("adds up the stretches between the entry's effects: three of 150 ms are over 0.3 s", async () => {
    const outcome = await run(platform, lua(`${computeFor(150)}\n${computeFor(150)}\n${computeFor(150)}\nreturn 'done'`), {
      limits: UNBOUNDED,
      entryTimeLimit: limit(0.3),
      harness: slowHarness(0),
    });
    expect(outcome.status === 'failed' && outcome.error).toMatchObject({ kind: 'Limit', message: LIMITED });
  });
});

describe('what the limit does not count', () => {
  it('waits on effects: five effects of 200 ms each, in an entry limited to 0.3 s', async () => {
    const block = "for i = 1, 5 do store.write('a.txt', tostring(i)) end return store.read('a.txt')";
    const outcome = await run(platform, lua(block), { entryTimeLimit: limit(0.3), harness: slowHarness(200) });
    expect(outcome).toMatchObject({ status: 'completed', result: '5' });
  });

  // Each entry leaves 200 ms of the limit free, so a busy machine pausing the process does not fail it.
  it('other entries: four sections computing 100 ms each, 0.4 s in all, complete under a 0.3 s limit', async () => {
    const section = (name: string) => `## ${name}\n\n\`\`\`lua\n${computeFor(100)}\n\`\`\`\n\n`;
    const sections = ['A', 'B', 'C', 'D'].map(section).join('');
    const target = prompt(`# Test\n\n${sections}## End\n\n\`\`\`lua\nreturn 'all four'\n\`\`\`\n`);
    const outcome = await run(platform, target, { limits: UNBOUNDED, entryTimeLimit: limit(0.3), harness: slowHarness(0) });
    expect(outcome).toMatchObject({ status: 'completed', result: 'all four' });
  });

  it('a run without the option: an entry computing past 0.3 s is fine', async () => {
    const outcome = await run(platform, lua(`${computeFor(400)}\nreturn 'fine'`), { harness: slowHarness(0) });
    expect(outcome).toMatchObject({ status: 'completed', result: 'fine' });
  });
});
