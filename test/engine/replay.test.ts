import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { Harness } from '../../src/engine/effects.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import { lua, newPlatform, prompt, resultOf, run } from './helpers.ts';

const refusingHarness: Harness = {
  perform: async (request) => {
    throw new Error(`replay called the Harness for ${request.op}`);
  },
};

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const storeWork = lua(`
store.write('notes.md', 'one')
store.append('notes.md', ' two')
local listed = store.list('')
var.seen = store.read('notes.md')
log('listed', #listed)
return var.seen .. '|' .. listed[1] .. '|' .. tostring(store.delete('notes.md'))
`);

describe('replay of a journal', () => {
  it('reproduces the result and the events without calling the Harness', async () => {
    const first = await run(platform, storeWork);
    expect(resultOf(first)).toBe('one two|notes.md|true');
    expect(first.journal.map((entry) => entry.request.op)).toEqual(['store.write', 'store.append', 'store.list', 'store.read', 'store.delete']);
    const replay = await run(platform, storeWork, { journal: first.journal, harness: refusingHarness });
    expect(resultOf(replay)).toBe(resultOf(first));
    expect(replay.events).toEqual(first.events);
  });

  it('counts the events the host says it holds, and reports only the ones after them', async () => {
    const first = await run(platform, storeWork);
    const known = 4;
    const heard: number[] = [];
    const store = new MemoryRunStore();
    store.files.set('notes.md', 'one two');
    const resumed = await run(platform, storeWork, {
      journal: first.journal.slice(0, 2),
      store,
      eventsKnown: known,
      onEvent: (event) => heard.push(event.seq),
    });
    expect(resultOf(resumed)).toBe(resultOf(first));
    expect(resumed.events).toEqual(first.events.slice(known));
    expect(heard).toEqual(first.events.slice(known).map((event) => event.seq));
  });

  it('replays a failed effect as the same failure', async () => {
    const target = lua(`local ok, err = pcall(store.read, 'missing.md')\nreturn err.kind .. ': ' .. tostring(err)`);
    const first = await run(platform, target);
    expect(resultOf(first)).toBe('store: store.read: no file at missing.md');
    const replay = await run(platform, target, { journal: first.journal, harness: refusingHarness });
    expect(resultOf(replay)).toBe(resultOf(first));
  });

  it('goes live after the journal ends, so a run resumes where it stopped', async () => {
    const first = await run(platform, storeWork);
    const partial = first.journal.slice(0, 2);
    // The store as it stood when the process died after two journaled effects.
    const store = new MemoryRunStore();
    store.files.set('notes.md', 'one two');
    const resumed = await run(platform, storeWork, { journal: partial, store });
    expect(resultOf(resumed)).toBe('one two|notes.md|true');
    expect(resumed.journal).toHaveLength(5);
  });

  it('ends with Determinism when the prompt asks for another effect than the journal holds', async () => {
    const first = await run(platform, storeWork);
    const changed = lua(`store.write('other.md', 'one')\nreturn 'x'`);
    const replay = await run(platform, changed, { journal: first.journal, harness: refusingHarness });
    expect(replay.status).toBe('failed');
    if (replay.status !== 'failed') return;
    expect(replay.error.kind).toBe('Determinism');
    expect(replay.error.message).toContain('diverged from its journal at effect 1 of chain 0');
    expect(replay.error.message).toContain('other.md');
  });

  it('ends with Determinism when the run finishes before using its whole journal', async () => {
    const first = await run(platform, storeWork);
    const shorter = lua(`store.write('notes.md', 'one')\nreturn 'done'`);
    const replay = await run(platform, shorter, { journal: first.journal, harness: refusingHarness });
    expect(replay.status).toBe('failed');
    if (replay.status === 'failed') expect(replay.error.kind).toBe('Determinism');
  });

  it('cannot be caught by pcall in the prompt', async () => {
    const first = await run(platform, lua(`store.write('a.md', 'x')\nreturn 'ok'`));
    const sneaky = lua(`local ok = pcall(store.write, 'b.md', 'x')\nreturn 'kept going'`);
    const replay = await run(platform, sneaky, { journal: first.journal, harness: refusingHarness });
    expect(replay.status).toBe('failed');
    if (replay.status === 'failed') expect(replay.error.kind).toBe('Determinism');
  });
});

describe('replay across Lua engines whose pairs order differs', () => {
  const perKey = lua(`
local t = {}
for i = 1, 40 do t['key' .. i] = i end
local order = {}
for k, v in pairs(t) do
  store.write(k .. '.txt', tostring(v))
  order[#order + 1] = k
end
return table.concat(order, ',')
`);

  it('makes the effects in the same order in a fresh engine, so the journal replays', async () => {
    const first = await run(platform, perKey);
    const otherPlatform = await newPlatform();
    // A second live VM in the other heap shifts its string hash seeds once more.
    await run(otherPlatform, lua(`local x = {} for i = 1, 100 do x['k' .. i] = i end return 'warm'`));
    const replay = await run(otherPlatform, perKey, { journal: first.journal, harness: refusingHarness });
    expect(resultOf(replay)).toBe(resultOf(first));
    expect(replay.events).toEqual(first.events);
  });

  it('walks string keys in sorted order after the list part', async () => {
    const outcome = await run(
      platform,
      lua(`
local t = { 'a', 'b', zeta = 1, alpha = 2, [10] = 'ten', [true] = 'yes' }
local keys = {}
for k in pairs(t) do keys[#keys + 1] = tostring(k) end
return table.concat(keys, ' ')`),
    );
    expect(resultOf(outcome)).toBe('1 2 10 alpha zeta true');
  });
});

describe('the same seed gives the same run', () => {
  const random = prompt('# R\n\n## One\n\n```lua\nreturn math.random(1, 1000000) .. ":" .. untrusted("x"):match("untrusted_input_(%x+)")\n```\n');

  it('repeats math.random and the nonce for one seed and changes them for another', async () => {
    const a = resultOf(await run(platform, random, { seed: 'seed-a' }));
    const again = resultOf(await run(await newPlatform(), random, { seed: 'seed-a' }));
    const b = resultOf(await run(platform, random, { seed: 'seed-b' }));
    expect(again).toBe(a);
    expect(b).not.toBe(a);
    expect(a.split(':')[1]).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('comparing a replayed effect with its journal entry', () => {
  it('ignores key order and tells different values apart', async () => {
    const { sameJson } = await import('../../src/json/canonical-json.ts');
    expect(sameJson({ op: 'x', args: { a: 1, b: [1, { c: null }] } }, { args: { b: [1, { c: null }], a: 1 }, op: 'x' })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({ a: '1' }, { a: 1 })).toBe(false);
    expect(sameJson([], {})).toBe(false);
  });
});

describe('the digest a model round is journaled by', () => {
  it('stays what journals already hold, and digests parts as their concatenation', async () => {
    const { digestText } = await import('../../src/json/digest.ts');
    // Pinned: a change here makes every stored journal's model rounds read as diverged.
    expect(digestText('{"role":"user"}')).toBe('3dfa53b0b23995f9');
    expect(digestText('')).toBe('811c9dc5050c5d1f');
    // Each half keeps its leading zeros.
    expect(digestText('x301')).toBe('69e9746f00605f62');
    expect(digestText('x1127')).toBe('009a4ea2f2da441c');
    expect(digestText('{"role":', '"user"}')).toBe(digestText('{"role":"user"}'));
    expect(digestText('a', '', 'bc')).not.toBe(digestText('acb'));
  });
});
