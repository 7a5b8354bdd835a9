/**
 * What a replay that leaves its journal says: the step, the section and both effects in
 * words a prompt's author reads (never a digest), the first entry a run never reached, and
 * the entry a fork cuts at (RunOutcome.diverged).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from '../../src/engine/effects.ts';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, run } from './helpers.ts';

const refusingHarness: Harness = {
  perform: async (request) => {
    throw new Error(`replay called the Harness for ${request.op}`);
  },
};

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const failure = (outcome: Awaited<ReturnType<typeof run>>) => {
  if (outcome.status !== 'failed') throw new Error(`the run ${outcome.status}`);
  return outcome;
};

describe('a replay that leaves its journal', () => {
  it('names the effect, the section and what the journal recorded and the prompt asks for now', async () => {
    const first = await run(platform, lua("store.write('notes.md', 'one')\nreturn 'x'"));
    const replay = failure(await run(platform, lua("store.append('other.md', 'three')\nreturn 'x'"), { journal: first.journal, harness: refusingHarness }));
    expect(replay.error).toMatchObject({
      kind: 'Determinism',
      message:
        'the run diverged from its journal at effect 1 of chain 0, in section "## Only": the journal recorded a write of the store file "notes.md" (3 characters); the prompt now asks for an append to the store file "other.md" (5 characters)',
    });
    expect(replay.diverged).toBe(first.journal[0]);
  });

  it('names the first journaled entry a run that ended early never reached', async () => {
    const first = await run(platform, lua("store.write('a.md', 'x')\nstore.read('a.md')\nreturn 'x'"));
    const replay = failure(await run(platform, lua("store.write('a.md', 'x')\nreturn 'x'"), { journal: first.journal, harness: refusingHarness }));
    expect(replay.error.message).toBe(
      'the run ended with 1 journaled effect(s) it never asked for; the prompt no longer does what the journal recorded (the first it never reached: effect 2 of chain 0: a read of the store file "a.md")',
    );
    expect(replay.diverged).toBe(first.journal[1]);
  });

  it('says nothing of a divergence for a run that replays', async () => {
    const prompt = lua("store.write('a.md', 'x')\nreturn 'x'");
    const first = await run(platform, prompt);
    const replay = await run(platform, prompt, { journal: first.journal, harness: refusingHarness });
    expect(replay.status).toBe('completed');
    expect('diverged' in replay).toBe(false);
  });
});

describe('onReplayed', () => {
  it('is told once, when the run has taken its whole journal, and at once for an empty one', async () => {
    const prompt = lua("store.write('a.md', 'x')\nstore.append('a.md', 'y')\nreturn store.read('a.md')");
    const first = await run(platform, prompt);
    const told: number[] = [];
    let performed = 0;
    const counting: Harness = { perform: async () => (performed++, { ok: true, value: null }) };
    await run(platform, prompt, { journal: first.journal.slice(0, 2), harness: counting, onReplayed: () => told.push(performed) });
    expect(told).toEqual([0]);
    const fresh: number[] = [];
    await run(platform, prompt, { onReplayed: () => fresh.push(1) });
    expect(fresh).toEqual([1]);
  });
});
