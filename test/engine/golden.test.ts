/**
 * The golden run (golden/run.md): tasks, an operator ask, tool rounds of one and two calls
 * and a one-off model round. Its journal, events and digests are committed, so a change to
 * the Engine's protocol that alters what a run does, or what it records, shows here.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import { GOLDEN_DIGESTS, GOLDEN_EVENTS, GOLDEN_JOURNAL, digestsOf, runGolden } from './golden/golden.ts';
import { newPlatform } from './helpers.ts';

const journal = JSON.parse(readFileSync(GOLDEN_JOURNAL, 'utf8')) as JournalEntry[];
const events = JSON.parse(readFileSync(GOLDEN_EVENTS, 'utf8')) as unknown[];
const digests = JSON.parse(readFileSync(GOLDEN_DIGESTS, 'utf8')) as unknown;

/** Journal entries in chain, then step order. */
function byStep(entries: readonly JournalEntry[]): JournalEntry[] {
  return [...entries].sort((a, b) => (a.chain === b.chain ? a.seq - b.seq : a.chain < b.chain ? -1 : 1));
}

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

describe('the golden run', () => {
  it('records, live, the committed journal and events', async () => {
    const outcome = await runGolden(platform);
    expect(outcome.journal).toEqual(journal);
    expect(outcome.events).toEqual(events);
    expect(digestsOf(outcome)).toEqual(digests);
  });

  it('replays from the committed journal to the same events, calling no model, operator or tool', async () => {
    const outcome = await runGolden(platform, journal);
    expect(outcome.events).toEqual(events);
    // A replay takes the entries in its own order; it holds the same ones.
    expect(byStep(outcome.journal)).toEqual(byStep(journal));
    expect({ ...digestsOf(outcome), journal: null }).toEqual({ ...(digests as object), journal: null });
  });

  it('goes to the Host for what the journal lacks (here a Host with no model replies, so the run fails)', async () => {
    const cut = journal.filter((entry) => entry.request.op !== 'model.round');
    const outcome = await runGolden(platform, cut);
    expect(outcome.status).toBe('failed');
  });
});
