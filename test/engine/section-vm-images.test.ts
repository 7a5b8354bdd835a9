/**
 * Section VMs made from the section template (entry/driver.ts's SECTION_VM): copied back
 * from a memory region's saved image when a region is free, built afresh when none is. The
 * Tools chapter, "Every section entry starts empty": each entry runs in a fresh section VM.
 * Whichever way a VM is made, the run must not be able to tell.
 */
import wasmoon from 'wasmoon';
import { beforeAll, describe, expect, it } from 'vitest';
import { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import { answered, type EffectAnswer, type Harness } from '../../src/engine/effects.ts';
import { lua, prompt, resultOf, run } from './helpers.ts';

const refusingHarness: Harness = {
  perform: async (request) => {
    throw new Error(`replay called the Harness for ${request.op}`);
  },
};

let withRegions: LuaPlatform;
let oneRegion: LuaPlatform;
let noRegions: LuaPlatform;
beforeAll(async () => {
  withRegions = await LuaPlatform.create(() => new wasmoon.LuaFactory());
  oneRegion = await LuaPlatform.create(() => new wasmoon.LuaFactory(), undefined, { regions: 1 });
  noRegions = await LuaPlatform.create(() => new wasmoon.LuaFactory(), undefined, { regions: 0 });
});

/** Regions for every VM, one region (the rest built afresh), none at all. */
const platforms = () => [withRegions, oneRegion, noRegions];

/** A section that changes everything a section's code can reach in its VM. */
const vandal = lua(`
leftover = 'from the run before'
string.upper = nil
table.insert = function() error('patched') end
math.randomseed(12345)
pcall(function() json.encode = nil end) -- sealed: refused, and no VM after sees a change
setmetatable(_G, { __index = function() return 'ghost' end })
return 'done'`);

/** A section that reports what the vandal would have changed. */
const witness = lua(`
local t = {}
table.insert(t, 'ok')
return table.concat({ tostring(rawget(_G, 'leftover')), type(string.upper), t[1], tostring(getmetatable(_G)), type(json.encode), tostring(math.random(1000000)) }, ' ')`);

describe('Every section entry starts empty (the Tools chapter)', () => {
  it('gives each entry a VM untouched by the entries before it, however the VM was made', async () => {
    const clean = resultOf(await run(noRegions, witness));
    expect(clean).toMatch(/^nil function ok nil function \d+$/);
    for (const platform of platforms()) {
      for (let round = 0; round < 3; round++) {
        expect(resultOf(await run(platform, vandal))).toBe('done');
        expect(resultOf(await run(platform, witness))).toBe(clean);
      }
    }
  });

  it('gives each section entry of one run its own VM', async () => {
    const twoSections = prompt(
      "# Two\n\n## First\n\n```lua\nleftover = 1\ntools.offer(tools.required())\n```\n\n## Second\n\n```lua\nreturn tostring(rawget(_G, 'leftover'))\n```\n",
    );
    for (const platform of platforms()) expect(resultOf(await run(platform, twoSections))).toBe('nil');
  });
});

/** Tasks that compute long enough to be paused between effects, a model round and a fanout. */
const busy = prompt(
  `# Busy

## Main

\`\`\`lua
local a = tasks.spawn('## Busy', 1)
local b = tasks.spawn('## Busy', 2)
local arms = tasks.fanout('## Arm', { 1, 2, 3 })
local reply = models.infer('hello')
return table.concat(tasks.await_all({ a, b }), '|') .. '|' .. table.concat(arms, ',') .. '|' .. reply .. '|' .. math.random(1000)
\`\`\`

## Busy

\`\`\`lua
local n = ...
local x = 0
for i = 1, 300000 do x = x + i % 7 end
store.append('busy' .. n .. '.txt', tostring(x))
local parts = {}
for i = 1, 2000 do parts[#parts + 1] = tostring(i) end
return n .. ':' .. x .. ':' .. #table.concat(parts) .. ':' .. store.read('busy' .. n .. '.txt')
\`\`\`

## Arm

\`\`\`lua
return item * 10 + math.random(9)
\`\`\`
`,
  'models:\n  writer: {}\n',
);

describe('a run whose VMs come from images, from a lone region or from fresh builds', () => {
  it('has the same result, events and journal every way', async () => {
    const outcomes = [];
    for (const platform of platforms()) outcomes.push(await run(platform, busy, { model: [{ content: 'hi' }] }));
    const [first, ...others] = outcomes;
    expect(first!.status).toBe('completed');
    for (const other of others) {
      expect(other.status).toBe('completed');
      expect(other.events).toEqual(first!.events);
      expect(other.journal).toEqual(first!.journal);
      if (other.status === 'completed' && first!.status === 'completed') expect(other.result).toBe(first!.result);
    }
  });

  it('replays a journal made one way on a platform that makes its VMs the other way', async () => {
    const live = await run(withRegions, busy, { model: [{ content: 'hi' }] });
    expect(live.journal.some((entry: JournalEntry) => entry.chain === 'scheduler')).toBe(true);
    for (const platform of [noRegions, oneRegion]) {
      const replay = await run(platform, busy, { journal: live.journal, harness: refusingHarness });
      expect(replay.status).toBe('completed');
      expect(replay.events).toEqual(live.events);
    }
  });
});

describe('memory in a section VM', () => {
  it('holds the memory limit, and the next entry in the same place starts clean', async () => {
    for (const platform of platforms()) {
      const outcome = await run(platform, lua(`return #string.rep('x', 64 * 1024 * 1024)`));
      expect(outcome.status === 'failed' && outcome.error.message).toContain('memory limit of 16 MiB (memoryBytes)');
      expect(resultOf(await run(platform, lua('return 1 + 1')))).toBe('2');
    }
  });

  it('lets an entry outgrow its region (under the limit) and gives the memory back after', async () => {
    const grow = lua(`
local t = {}
for i = 1, 40000 do t[i] = string.rep(string.char(65 + i % 26), 64) .. i end
return #t .. ':' .. t[40000]:sub(1, 3)`);
    expect(resultOf(await run(oneRegion, grow))).toBe('40000:MMM');
    // Each run spills megabytes: were they kept, the wasm memory would have to grow.
    const heapBytes = oneRegion.lua.module.HEAPU8.length;
    for (let i = 0; i < 6; i++) expect(resultOf(await run(oneRegion, grow))).toBe('40000:MMM');
    expect(oneRegion.lua.module.HEAPU8.length).toBe(heapBytes);
  });

  it('restores images after the wasm memory has grown (a new buffer)', async () => {
    const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory(), undefined, { regions: 2 });
    expect(resultOf(await run(platform, vandal))).toBe('done');
    const before = platform.lua.module.HEAPU8.length;
    const big = lua(`local t = {} for i = 1, 300000 do t[i] = string.rep('y', 90) .. i end return #t`);
    expect(resultOf(await run(platform, big, { limits: { memoryBytes: 200 * 1024 * 1024 } }))).toBe('300000');
    expect(platform.lua.module.HEAPU8.length).toBeGreaterThan(before);
    const clean = resultOf(await run(noRegions, witness));
    for (let i = 0; i < 3; i++) expect(resultOf(await run(platform, witness))).toBe(clean);
  });

  it('runs no Lua once the entry has ended: no finalizer can be left pending', async () => {
    const pending = lua(`
kept = select(2, pcall(setmetatable, {}, { __gc = function() print('finalized') end }))
return 'ended'`);
    for (const platform of platforms()) {
      const outcome = await run(platform, pending);
      expect(resultOf(outcome)).toBe('ended');
      expect(outcome.events.filter((event) => event.type === 'log')).toEqual([]);
    }
  });
});

describe("a run's VMs closed by the host that gave the run up", () => {
  it('close where they stand, and their threads refuse to run again', async () => {
    let release: ((answer: EffectAnswer) => void) | undefined;
    const harness: Harness = { perform: () => new Promise((resolve) => (release = resolve)) };
    const owner = {};
    const before = withRegions.openVms;
    const pending = run(withRegions, lua("return store.read('a.md')"), { harness, owner });
    while (!release) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(withRegions.openVms).toBe(before + 1);
    withRegions.closeVmsOf(owner);
    expect(withRegions.openVms).toBe(before);
    // Another entry takes the region meanwhile.
    expect(resultOf(await run(withRegions, lua('return 7')))).toBe('7');
    release(answered('too late'));
    await expect(pending).rejects.toThrow('a Lua thread was resumed after its VM was closed');
    expect(resultOf(await run(withRegions, lua('return 8')))).toBe('8');
  });
});
