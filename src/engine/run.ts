/**
 * Running a prompt: the H1 pass, then the section walk with fall-through and jump, until a
 * section returns a value or the file ends. Every effect goes through the Harness and the
 * journal, so a run can be replayed from its journal.
 */
import type { Prompt } from '../prompt/types.ts';
import type { Json } from '../json/json.ts';
import { DEFAULT_LIMITS, StopSwitch, type RunLimits } from './budget.ts';
import type { Harness } from './effects.ts';
import { type RunError } from './errors.ts';
import { EventLog, type RunEvent } from './events.ts';
import { EffectRunner, type JournalEntry } from './journal.ts';
import type { LuaPlatform } from './lua/vm.ts';
import type { RunContext, RunUsage } from './run-context.ts';
import { deriveRunSeed } from './run-seed.ts';
import { enterSection } from './entry/driver.ts';
import type { EntryOutcome } from './entry/entry-types.ts';
import { Scheduler } from './scheduler.ts';
import { TaskBoard } from './tasks.ts';
import { ChainTaint } from './taint.ts';
import { VarState } from './var-state.ts';
import { EMPTY_CATALOG, type RunCatalog } from './catalog.ts';
import { RunMeter } from './run-meter.ts';
import { RunMemory } from './lua/run-memory.ts';
import type { EntryTimeLimit } from './entry-clock.ts';
import { entryArgs } from './untrusted-args.ts';

/** What a run needs. */
export interface RunOptions {
  prompt: Prompt;
  platform: LuaPlatform;
  harness: Harness;
  /** The run's arguments, already checked against the frontmatter's `args:` (src/prompt/run-args.ts). */
  args?: { [name: string]: Json };
  /**
   * Args whose values came from outside the run (a trigger's payload): Lua reads them as the
   * run's untrusted envelope wraps text, and a chain that reads one is tainted
   * (docs/language.md, "Untrusted args"). Names that are not args of the run are ignored.
   */
  untrustedArgs?: readonly string[];
  /** The run seed: the nonce and math.random derive from it. Default "0". */
  seed?: string;
  runId?: string;
  /** A journal to replay before going live. */
  journal?: readonly JournalEntry[];
  /**
   * Called once the run has taken every entry of `journal` (at its start when there is none):
   * from there on it is live. A fork checks with it that a prompt reproduces a journal's
   * first entries, and stops the run there.
   */
  onReplayed?: () => void;
  /** Called with each new journal entry before its answer reaches Lua (persist it here). */
  onJournal?: (entry: JournalEntry) => void | Promise<void>;
  onEvent?: (event: RunEvent) => void;
  /**
   * How many of the run's events the host already holds from an earlier execution (a replay
   * emits them again): they are counted, not made or reported, and the outcome's events
   * start after them.
   */
  eventsKnown?: number;
  limits?: Partial<RunLimits>;
  signal?: AbortSignal;
  /** The run's Packs and tools, prepared by the Host; an empty catalog when absent. */
  catalog?: RunCatalog;
  /**
   * Told true when every chain of the run waits on the outside (no chain can run until an
   * effect is answered), false when the run moves again. A Durable Object uses it to mark a
   * run suspended while it waits on an operator.
   */
  onBlocked?: (blocked: boolean) => void;
  /**
   * A wall-clock limit on how long one section entry may compute (entry-clock.ts), for a
   * host whose clock advances during CPU work; past it the run ends with Limit. None when
   * absent. It is no part of the journal: a replay is not bound to end where it did.
   */
  entryTimeLimit?: EntryTimeLimit;
  /** When the Host cannot satisfy the prompt: the requirements notice; the run fails before it starts. */
  requirementsNotice?: string;
  /**
   * Tags the run's Lua VMs, so that a host which gives the run up without letting it end (a
   * run object whose memory was dropped) can close them: LuaPlatform.closeVmsOf.
   */
  owner?: object;
}

/** How a run ended. */
export type RunOutcome =
  | { status: 'completed'; result: string; events: RunEvent[]; journal: JournalEntry[]; usage?: RunUsage }
  | {
      status: 'failed';
      error: RunError;
      events: RunEvent[];
      journal: JournalEntry[];
      usage?: RunUsage;
      /**
       * For a run that left its journal (Determinism), or ended before taking all of it: the
       * journaled entry where it did (the one held at the step that differs, else the first
       * it never reached). A fork cuts its journal there.
       */
      diverged?: JournalEntry;
    };

/** Runs a prompt to its end. */
export async function runPrompt(options: RunOptions): Promise<RunOutcome> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const events = new EventLog(options.onEvent, options.eventsKnown);
  const effects = new EffectRunner(options.harness, options.journal ?? [], options.onJournal);
  const stop = new StopSwitch(limits, options.signal);
  const meter = new RunMeter(limits, stop);
  events.meter = meter;
  effects.meter = meter;
  effects.onReplayed = options.onReplayed;
  const scheduler = new Scheduler({
    runId: options.runId ?? 'run-1',
    effects,
    stop,
    // Someone outside can cancel: a looping chain pauses now and then so the event loop,
    // and the cancellation, can run.
    ...(options.signal ? { yieldToHost: macrotask } : {}),
    ...(options.onBlocked ? { onBlocked: options.onBlocked } : {}),
  });
  const args = options.args ?? {};
  const seed = await deriveRunSeed(options.seed ?? '0');
  const run = {
    runId: options.runId ?? 'run-1',
    prompt: options.prompt,
    platform: options.platform,
    vmOwner: options.owner,
    args,
    entryArgs: entryArgs(args, options.untrustedArgs ?? [], seed.nonce),
    seed,
    vars: new VarState(limits.varBytes),
    taint: new ChainTaint(),
    memory: new RunMemory(limits.runMemoryBytes, stop),
    events,
    effects,
    scheduler,
    stop,
    limits,
    entryCount: 0,
    vmCount: 0,
    // Keyed by section names, which are the prompt's: no inherited names.
    replies: Object.create(null) as { [section: string]: string },
    lastReply: '',
    catalog: options.catalog ?? EMPTY_CATALOG,
    defaultRole: null,
    usage: { rounds: 0, input_tokens: 0, output_tokens: 0 },
    ...(options.entryTimeLimit ? { entryTimeLimit: options.entryTimeLimit } : {}),
  } as RunContext;
  run.tasks = new TaskBoard(run, enterSection);
  const place = { section: null, task: '0', turn: 0 };
  const { untrusted } = run.entryArgs;
  events.emit('run_started', place, {
    prompt: options.prompt.frontmatter.name,
    args: run.args,
    // Which args came from outside: a replay, given the same, reads them as the run did.
    ...(untrusted.length > 0 ? { untrusted_args: untrusted } : {}),
  });
  if (options.requirementsNotice !== undefined) {
    return fail(run, { kind: 'RequirementsUnmet', message: options.requirementsNotice });
  }
  for (const line of run.catalog.log) events.emit('log', place, { message: line });
  effects.begin();
  const ended = await scheduler.run(async () => {
    const end = await walk(run);
    // The run ends with its main chain: tasks still running end with it.
    run.tasks.cancelAll('the run ended');
    return end;
  });
  // Entries still parked on effects that will never matter hold VMs: the run's memory goes now.
  options.platform.closeVmsOf(run.memory);
  if (ended.status === 'completed' && effects.unconsumed() > 0) {
    return fail(run, {
      kind: 'Determinism',
      message: `the run ended with ${effects.unconsumed()} journaled effect(s) it never asked for; the prompt no longer does what the journal recorded (the first it never reached: ${effects.firstUnreached()})`,
    });
  }
  if (ended.status === 'failed') return fail(run, ended.error);
  events.emit('run_completed', place, { result: ended.result, usage: { ...run.usage } });
  return { status: 'completed', result: ended.result, events: events.all(), journal: effects.journal(), usage: run.usage };
}

/** Lets the host's event loop run once: a macrotask, so a cancellation waiting there arrives. */
function macrotask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function fail(run: RunContext, error: RunError): RunOutcome {
  run.events.emit('run_failed', { section: null, task: '0', turn: 0 }, { error: { kind: error.kind, message: error.message }, usage: { ...run.usage } });
  const diverged = run.effects.divergedAt ?? run.effects.firstUnreachedEntry();
  return { status: 'failed', error, events: run.events.all(), journal: run.effects.journal(), usage: run.usage, ...(diverged ? { diverged } : {}) };
}

type WalkEnd = { status: 'completed'; result: string } | { status: 'failed'; error: RunError };

async function walk(run: RunContext): Promise<WalkEnd> {
  const { prompt } = run;
  let index = 0;
  const h1 = prompt.h1;
  if (h1.prologue.length + h1.epilogue.length > 0) {
    const outcome = await enterSection(run, { kind: 'h1', section: { ...h1, prose: '', name: prompt.title }, chain: '0' });
    const next = settle(run, outcome);
    if (next.end) return next.end;
    if (next.jump !== undefined) index = next.jump;
  }
  while (index < prompt.sections.length) {
    const section = prompt.sections[index]!;
    const outcome = await enterSection(run, { kind: 'walk', section, chain: '0' });
    const next = settle(run, outcome);
    if (next.end) return next.end;
    index = next.jump ?? index + 1;
  }
  return { status: 'completed', result: run.lastReply };
}

function settle(run: RunContext, outcome: EntryOutcome): { end?: WalkEnd; jump?: number } {
  switch (outcome.type) {
    case 'return':
      return { end: { status: 'completed', result: outcome.text } };
    case 'fall':
      return {};
    case 'jump':
      return { jump: run.prompt.sections.findIndex((s) => s.name === outcome.target) };
    case 'error':
    case 'stop':
      return { end: { status: 'failed', error: outcome.error } };
  }
}
