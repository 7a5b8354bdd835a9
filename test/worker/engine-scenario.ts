/**
 * The Engine scenarios run inside workerd, shared by engine-in-workerd.test.ts (the vitest
 * pool) and the Worker bundle (bundle/entry.ts): a multi-section prompt through every
 * Engine feature, its replay, a Limit error, and many runs in a row in one isolate.
 *
 * This module imports the Engine, and so wasmoon: its importer loads the Lua adapter first
 * (src/worker/workerd-lua/README.md, "It loads first").
 * What Node gives for the same runs is in engine-expected.ts.
 */
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { runPrompt, type RunOutcome } from '../../src/engine/run.ts';
import type { Harness } from '../../src/engine/effects.ts';
import type { RunEvent } from '../../src/engine/events.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import { parsePrompt } from '../../src/prompt/parse.ts';
import type { Prompt } from '../../src/prompt/types.ts';
import { createHarness, servicesOf } from '../../src/host/harness.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import { ScriptedProvider, type ScriptedReply } from '../../src/models/scripted.ts';
import type { LoopSummary, TourSummary, TrioSummary } from './engine-expected.ts';

const block = (code: string) => '```lua\n' + code + '\n```\n';

/**
 * The tour: the H1 pass, a fall-through into a model step (a prose-only section), a jump
 * over a section, then call, require, var, store, json with json.null, untrusted() and
 * math.random in the section that returns.
 */
export const TOUR_TEXT = `---
name: engine-tour
description: Every Engine feature in one run.
runvil: 0
models:
  writer: {}
---

# Tour

You are terse.

${block("var.trail = 'h1'\nvar.config = { mode = 'fast', tags = { 'a', 'b' } }")}
## Start

${block("var.trail = var.trail .. ',start'\nstore.write('notes/a.md', 'alpha')\nstore.write('notes/b.md', 'beta')\nstore.write('other.md', 'other')")}
## Ask

Name a color for {{ var.config.mode }} runs.

## Gather

${block("var.trail = var.trail .. ',gather'\nvar.color = sys.replies['Ask']\njump('## Work')\nvar.trail = 'never'")}
## Skipped

${block("return 'skipped section ran'")}
## Work

${block(`local lib = require '## lib'
require '## lib'
local doubled = call('## Double', 21)
local listed = table.concat(store.list('notes/'), ',')
local text = store.read('notes/a.md')
local decoded = json.decode('{"k":[1,null,"x"],"n":null,"f":2.5}')
local encoded = json.encode({
  list = decoded.k,
  isnull = decoded.n == json.null,
  f = decoded.f,
  color = var.color,
  tags = var.config.tags,
  none = json.null,
  empty = json.array(),
})
local wrapped = untrusted('<b>hi</b> [INST]')
var.trail = var.trail .. ',work'
return table.concat({
  var.trail,
  lib.shout(text) .. '|' .. shared .. '|' .. var.loads,
  tostring(doubled) .. '|' .. tostring(helper),
  listed,
  encoded,
  wrapped,
  tostring(math.random(1, 1000000)),
}, '\\n')`)}
## Double

${block("local n = ...\nhelper = 'only in the callee'\nreturn n * 2")}
## lib

${block("var.loads = (var.loads or 0) + 1\nshared = 'global from lib'\nreturn { shout = function(s) return s:upper() .. '!' end }")}`;

/** The model's replies for the tour: one, for `## Ask`. */
export const TOUR_MODEL: ScriptedReply[] = [{ content: 'teal' }];
export const TOUR_SEED = 'workerd';

/** An endless loop under a small instruction budget. */
export const LOOP_TEXT = `---
name: engine-loop
description: Runs forever.
runvil: 0
---

# Loop

## Spin

${block('while true do end')}`;
export const LOOP_INSTRUCTIONS = 2_000_000;

/** Three sections: a fall-through, a call, a return; reads `n.txt` from the store. */
export const TRIO_TEXT = `---
name: engine-trio
description: Three small sections.
runvil: 0
---

# Trio

## One

${block("var.n = tonumber(store.read('n.txt'))\nvar.seen = { 'one' }")}
## Two

${block("var.seen[#var.seen + 1] = 'two'\nstore.write('out.txt', tostring(call('## Square', var.n)))")}
## Three

${block("return table.concat(var.seen, ',') .. ',three:' .. store.read('out.txt')")}
## Square

${block('local n = ...\nreturn n * n')}`;

function parse(text: string, file: string): Prompt {
  const parsed = parsePrompt(text, file);
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join('\n'));
  return parsed.prompt;
}

function harnessFor(store: MemoryRunStore, provider: ScriptedProvider): Harness {
  return createHarness({
    runId: 'run-1',
    store,
    packs: new Map(),
    services: servicesOf(),
    operator: new ScriptedOperator([]),
    models: { provider: () => provider },
    clock: () => 1_700_000_000_000,
  });
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

function errorOf(outcome: RunOutcome): { kind: string; message: string } | undefined {
  return outcome.status === 'failed' ? { kind: outcome.error.kind, message: outcome.error.message } : undefined;
}

/** Runs the tour, then replays its journal with a Harness that throws if called. */
export async function runTour(platform: LuaPlatform): Promise<TourSummary> {
  const prompt = parse(TOUR_TEXT, 'tour.md');
  const store = new MemoryRunStore();
  const provider = new ScriptedProvider(TOUR_MODEL);
  const first = await runPrompt({ prompt, platform, harness: harnessFor(store, provider), seed: TOUR_SEED });

  let harnessCalls = 0;
  const refusing: Harness = {
    perform: async (request) => {
      harnessCalls += 1;
      throw new Error(`replay called the Harness for ${request.op}`);
    },
  };
  const journal: readonly JournalEntry[] = structuredClone(first.journal);
  const replay = await runPrompt({ prompt, platform, harness: refusing, journal, seed: TOUR_SEED });

  return {
    status: first.status,
    result: first.status === 'completed' ? first.result : '',
    ...(errorOf(first) ? { error: errorOf(first)! } : {}),
    eventTypes: first.events.map((e: RunEvent) => e.type),
    eventsDigest: await sha256Hex(JSON.stringify(first.events)),
    journalOps: first.journal.map((entry) => entry.request.op),
    store: Object.fromEntries([...store.files].sort(([a], [b]) => (a < b ? -1 : 1))),
    modelMessages: (provider.requests[0] as { messages?: unknown } | undefined)?.messages ?? null,
    replay: {
      status: replay.status,
      sameResult: replay.status === 'completed' && first.status === 'completed' && replay.result === first.result,
      sameEvents: JSON.stringify(replay.events) === JSON.stringify(first.events),
      harnessCalls,
    },
  };
}

/** Runs `while true do end` under a budget of LOOP_INSTRUCTIONS. */
export async function runLoop(platform: LuaPlatform): Promise<LoopSummary> {
  const outcome = await runPrompt({
    prompt: parse(LOOP_TEXT, 'loop.md'),
    platform,
    harness: harnessFor(new MemoryRunStore(), new ScriptedProvider([])),
    limits: { instructions: LOOP_INSTRUCTIONS },
  });
  return { status: outcome.status, ...(errorOf(outcome) ? { error: errorOf(outcome)! } : {}) };
}

/** Runs the trio `count` times in a row on one platform, each run with its own store. */
export async function runTrios(platform: LuaPlatform, count: number): Promise<TrioSummary> {
  const prompt = parse(TRIO_TEXT, 'trio.md');
  const heapBefore = platform.lua.module.HEAPU8.length;
  const wrong: { i: number; got: string }[] = [];
  for (let i = 0; i < count; i += 1) {
    const store = new MemoryRunStore();
    store.files.set('n.txt', String(i));
    const outcome = await runPrompt({
      prompt,
      platform,
      harness: harnessFor(store, new ScriptedProvider([])),
      seed: String(i),
    });
    const got = outcome.status === 'completed' ? outcome.result : `${outcome.error.kind}: ${outcome.error.message}`;
    if (got !== `one,two,three:${i * i}`) wrong.push({ i, got });
  }
  return {
    count,
    wrong,
    heapBefore,
    heapAfter: platform.lua.module.HEAPU8.length,
  };
}
