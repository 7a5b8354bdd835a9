import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { Harness } from '../../src/engine/effects.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import { createHarness, servicesOf } from '../../src/host/harness.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import { ScriptedProvider } from '../../src/models/scripted.ts';
import { lua, newPlatform, prompt, resultOf, run } from './helpers.ts';

const refusingHarness: Harness = {
  perform: async (request) => {
    throw new Error(`replay called the Harness for ${request.op}`);
  },
};

/** A small deterministic PRNG, so a shuffled order can be reproduced from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Harness over an in-memory store and a scripted model that answers each effect after a random delay. */
function shuffledHarness(seed: number): { harness: Harness; store: MemoryRunStore } {
  const next = random(seed);
  const store = new MemoryRunStore();
  const provider = new ScriptedProvider(Array.from({ length: 20 }, (_, i) => ({ content: `reply ${i + 1}` })));
  const inner = createHarness({
    runId: 'run-1',
    store,
    packs: new Map(),
    services: servicesOf(),
    operator: new ScriptedOperator([]),
    models: { provider: () => provider },
    clock: () => 1_700_000_000_000,
  });
  return {
    store,
    harness: {
      perform: async (request, context) => {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(next() * 6)));
        return inner.perform(request, context);
      },
    },
  };
}

/** Three tasks, each with a model round, store writes and reads and sys.now, while the main chain works too. */
const threeTasks = prompt(
  `# Three

## Main

\`\`\`lua
local list = {}
for i = 1, 3 do list[i] = tasks.spawn('## Worker', i) end
store.write('main.txt', 'main')
local results = tasks.await_all(list)
return table.concat(results, '\\n') .. '\\n' .. store.read('main.txt')
\`\`\`

## Worker

\`\`\`lua
local n = ...
local path = 'w' .. n .. '.txt'
store.write(path, 'start')
local reply = models.infer('hello from ' .. n)
store.append(path, '+' .. n)
local t = sys.now()
store.append(path, '+' .. t)
return sys.task_id .. ':' .. store.read(path) .. ':' .. (#reply > 0 and 'replied' or '')
\`\`\`
`,
  'models:\n  writer: {}\n',
);

const expected = ['0.0:start+1+1700000000000:replied', '0.1:start+2+1700000000000:replied', '0.2:start+3+1700000000000:replied', 'main'].join('\n');

const byKey = (journal: JournalEntry[]) => journal.slice().sort((a, b) => (a.chain === b.chain ? a.seq - b.seq : a.chain < b.chain ? -1 : 1));

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

describe('a run of three concurrent tasks whose answers land in a shuffled order', () => {
  it.each([1, 2, 3, 4, 5])('replays to the same result and events without calling the Harness (shuffle %i)', async (seed) => {
    const { harness } = shuffledHarness(seed);
    const live = await run(platform, threeTasks, { harness });
    expect(resultOf(live)).toBe(expected);
    const replay = await run(platform, threeTasks, { journal: live.journal, harness: refusingHarness });
    expect(resultOf(replay)).toBe(expected);
    expect(replay.events).toEqual(live.events);
    // The same entries; a replay lists them in the order it reached them, not the order answers landed.
    expect(byKey(replay.journal)).toEqual(byKey(live.journal));
  });

  it('journals the steps whose released chains depended on timing', async () => {
    const steps = new Set<number>();
    for (const seed of [1, 2, 3, 4, 5]) {
      const live = await run(platform, threeTasks, { harness: shuffledHarness(seed).harness });
      steps.add(live.journal.filter((entry) => entry.chain === 'scheduler').length);
    }
    expect([...steps].some((count) => count > 0)).toBe(true);
  });

  it('resumes from every prefix of its journal to the same result', async () => {
    const live = await run(platform, threeTasks, { harness: shuffledHarness(7).harness });
    expect(live.journal.some((entry) => entry.chain === 'scheduler')).toBe(true);
    for (let cut = 0; cut <= live.journal.length; cut++) {
      const { harness, store } = shuffledHarness(100 + cut);
      // The store as the journaled effects left it (the Worker commits each with its entry).
      for (const entry of live.journal.slice(0, cut)) {
        const request = entry.request;
        if (request.op === 'store.write') store.files.set(request.path, request.text);
        if (request.op === 'store.append') store.files.set(request.path, (store.files.get(request.path) ?? '') + request.text);
      }
      const resumed = await run(platform, threeTasks, { journal: live.journal.slice(0, cut), harness, store });
      expect(resultOf(resumed)).toBe(expected);
      const again = await run(platform, threeTasks, { journal: resumed.journal, harness: refusingHarness });
      expect(again.events).toEqual(resumed.events);
    }
  });

  it('ends with Determinism when a journaled step no longer fits the run', async () => {
    let live;
    for (let seed = 1; ; seed++) {
      live = await run(platform, threeTasks, { harness: shuffledHarness(seed).harness });
      if (live.journal.some((entry) => entry.chain === 'scheduler')) break;
    }
    const tampered: JournalEntry[] = live.journal.map((entry) => (entry.chain === 'scheduler' ? { ...entry, answer: { ok: true, value: ['0.9'] } } : entry));
    const replay = await run(platform, threeTasks, { journal: tampered, harness: refusingHarness });
    expect(replay.status).toBe('failed');
    if (replay.status === 'failed') {
      expect(replay.error.kind).toBe('Determinism');
      expect(replay.error.message).toContain('diverged from its journal at scheduler step');
    }
  });
});

/** Two tasks that compute long enough to be paused several times, between effects. */
const busyTasks = prompt(
  `# Busy

## Main

\`\`\`lua
local a = tasks.spawn('## Busy', 1)
local b = tasks.spawn('## Busy', 2)
for i = 1, 3 do store.append('main.txt', 'x') end
return table.concat(tasks.await_all({ a, b }), '|') .. '|' .. store.read('main.txt')
\`\`\`

## Busy

\`\`\`lua
local n = ...
local x = 0
for i = 1, 400000 do x = x + i % 7 end
store.append('busy' .. n .. '.txt', tostring(x))
for i = 1, 400000 do x = x + i % 3 end
var['busy' .. n] = x
return n .. ':' .. x .. ':' .. store.read('busy' .. n .. '.txt')
\`\`\`
`,
);

describe('a run whose tasks are paused while they compute', () => {
  it('replays to the same events, with or without a signal that lets the host run', async () => {
    const live = await run(platform, busyTasks, { harness: shuffledHarness(3).harness, signal: new AbortController().signal });
    expect(resultOf(live)).toBe('1:1600003:1200003|2:1600003:1200003|xxx');
    const replay = await run(platform, busyTasks, { journal: live.journal, harness: refusingHarness });
    expect(replay.events).toEqual(live.events);
  });
});

describe('the journal of a run with one chain', () => {
  it('holds its effects only, as before tasks existed', async () => {
    const outcome = await run(platform, lua(`store.write('a.md', 'x')\nstore.read('a.md')\nreturn 'ok'`));
    expect(outcome.journal.map((entry) => `${entry.chain}#${entry.seq}:${entry.request.op}`)).toEqual(['0#1:store.write', '0#2:store.read']);
  });

  it('holds no step while a task runs and the main chain only waits for it', async () => {
    const outcome = await run(
      platform,
      prompt(
        `# T\n\n## Main\n\n\`\`\`lua\nlocal t = tasks.spawn('## Child')\nreturn tasks.await(t)\n\`\`\`\n\n## Child\n\n\`\`\`lua\nstore.write('a.md', 'x')\nreturn store.read('a.md')\n\`\`\`\n`,
      ),
    );
    expect(resultOf(outcome)).toBe('x');
    expect(outcome.journal.map((entry) => `${entry.chain}#${entry.seq}`)).toEqual(['0.0#1', '0.0#2']);
  });
});
