/**
 * The golden run (run.md): tasks, an operator ask, tool rounds of one and two calls and a
 * one-off model round, on the fixture Host. golden.test.ts checks a live run and a replay
 * against the committed journal and event digests; `node --import tsx
 * test/engine/golden/golden.ts --write` records them again after a deliberate change.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import wasmoon from 'wasmoon';
import { digestText } from '../../../src/json/digest.ts';
import type { RunEvent } from '../../../src/engine/events.ts';
import { LuaPlatform } from '../../../src/engine/lua/vm.ts';
import type { JournalEntry } from '../../../src/engine/journal.ts';
import type { RunOutcome } from '../../../src/engine/run.ts';
import { fixtureHost } from '../../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../../src/host/host.ts';
import { parsePrompt } from '../../../src/prompt/parse.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** Where the committed journal, events and digests live. */
export const GOLDEN_JOURNAL = join(here, 'journal.json');
export const GOLDEN_DIGESTS = join(here, 'digests.json');
export const GOLDEN_EVENTS = join(here, 'events.json');

/** What web/search answers, by query. */
const SEARCH = { lua: 'results for lua', '*': 'other results' };

/** The model's replies, in the order the run asks for them. */
const MODEL = [
  {
    tool_calls: [
      { id: 'call_1', name: 'web_search', arguments: { query: 'lua' } },
      { id: 'call_2', name: 'web_search', arguments: { query: 'lua release' } },
    ],
  },
  { tool_calls: [{ id: 'call_3', name: 'web_search', arguments: { query: 'lua 5.4' } }] },
  { content: 'Lua 5.4' },
  { content: 'A short summary.' },
];

/**
 * Runs the golden prompt live, or from `journal` on a Host with no model replies, no
 * operator answers and no search results, so an effect that is not replayed shows.
 */
export async function runGolden(platform: LuaPlatform, journal?: readonly JournalEntry[]): Promise<RunOutcome> {
  const parsed = parsePrompt(readFileSync(join(here, 'run.md'), 'utf8'), 'run.md');
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join('\n'));
  const host = journal ? fixtureHost({ web: { search: {} } }, [], []) : fixtureHost({ web: { search: SEARCH } }, ['blue'], MODEL);
  return runOnHost(platform, host, { prompt: parsed.prompt, ...(journal ? { journal } : {}) });
}

/** The digests that pin a run: its journal, its events, and each event type's count. */
export function digestsOf(outcome: RunOutcome): { status: string; result: string; journal: string; events: string; types: Record<string, number> } {
  const types: Record<string, number> = {};
  for (const event of outcome.events) types[event.type] = (types[event.type] ?? 0) + 1;
  return {
    status: outcome.status,
    result: outcome.status === 'completed' ? outcome.result : `${outcome.error.kind}: ${outcome.error.message}`,
    journal: digestText(JSON.stringify(outcome.journal)),
    events: digestText(JSON.stringify(outcome.events satisfies RunEvent[])),
    types,
  };
}

if (process.argv.includes('--write')) {
  const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());
  const outcome = await runGolden(platform);
  writeFileSync(GOLDEN_JOURNAL, `${JSON.stringify(outcome.journal, null, 1)}\n`);
  writeFileSync(GOLDEN_EVENTS, `${JSON.stringify(outcome.events, null, 1)}\n`);
  writeFileSync(GOLDEN_DIGESTS, `${JSON.stringify(digestsOf(outcome), null, 2)}\n`);
  console.log(digestsOf(outcome));
}
