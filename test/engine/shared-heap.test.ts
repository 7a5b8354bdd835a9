/**
 * The platform's Lua memory shared fairly (waiting-runs.ts, vm-memory.ts): runs that only
 * wait on asks give their VMs up to a run that computes, oldest-waiting first, and resume
 * by replay of their journal with the result they would have had. Each run here is held as
 * a run object holds one (HostedRun): marked waiting while it only waits, its execution
 * dropped when the platform takes its VMs, replayed when its answer comes.
 */
import { describe, expect, it } from 'vitest';
import wasmoon from 'wasmoon';
import type { JournalEntry } from '../../src/engine/journal.ts';
import { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { RunOutcome } from '../../src/engine/run.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import type { AskContext, Operator, OperatorAnswer } from '../../src/host/operator.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import type { Prompt } from '../../src/prompt/types.ts';
import { prompt, resultOf } from './helpers.ts';

const MiB = 1024 * 1024;
const block = (code: string) => '```lua\n' + code + '\n```\n';
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Holds `megabytes` MiB in its one VM, then asks; returns the answer and what it held. */
const holdAndAsk = (megabytes: number) =>
  prompt(
    `# Hold\n\n## Main\n\n${block(`local kept = {}
for i = 1, ${megabytes} do kept[i] = ('k'):rep(${MiB} - 8) .. string.format('%08d', i) end
local answer = tools.call('user-input/ask', { question = 'Keep ' .. #kept .. ' MiB?' })
local n = 0
for _, s in ipairs(kept) do n = n + #s end
return answer .. ':' .. n`)}`,
    'uses: [user-input]\n',
  );

/** Tasks that each hold `megabytes` MiB and ask, awaited together. */
const tasksHoldAndAsk = (count: number, megabytes: number) =>
  prompt(
    `# Tasks\n\n## Main\n\n${block(`local ids = {}
for i = 1, ${count} do ids[i] = tasks.spawn('## Hold', i) end
local out = {}
for i, id in ipairs(ids) do out[i] = tasks.await(id) end
return table.concat(out, ',')`)}\n## Hold\n\n${block(`local n = ...
local kept = ('t'):rep(${megabytes * MiB}) .. n
return tools.call('user-input/ask', { question = 'Task ' .. n .. '?' }) .. '@' .. #kept`)}`,
    'uses: [user-input]\n',
  );

/** A fanout whose arms each hold `megabytes` MiB and ask. */
const fanoutHoldAndAsk = (count: number, megabytes: number) =>
  prompt(
    `# Fan\n\n## Main\n\n${block(`local items = {}
for i = 1, ${count} do items[i] = i end
return table.concat(tasks.fanout('## Arm', items), ',')`)}\n## Arm\n\n${block(`local kept = ('f'):rep(${megabytes * MiB}) .. item
return tools.call('user-input/ask', { question = 'Arm ' .. item .. '?' }) .. '@' .. #kept`)}`,
    'uses: [user-input]\n',
  );

/** Holds `megabytes` MiB in one VM at once, and asks nothing. */
const heavy = (megabytes: number) =>
  prompt(
    `# Heavy\n\n## Main\n\n${block(`local kept = {}
for i = 1, ${megabytes} do kept[i] = ('h'):rep(${MiB} - 8) .. string.format('%08d', i) end
local n = 0
for _, s in ipairs(kept) do n = n + #s end
return 'heavy:' .. n`)}`,
  );

/** A platform of `megabytes` MiB of Lua memory, its own wasm heap. */
const smallPlatform = (megabytes: number) => LuaPlatform.create(() => new wasmoon.LuaFactory(), undefined, { memoryBytes: megabytes * MiB });

/**
 * A run held as a run object holds one: its asks wait until the test answers them (by the
 * asking effect, so a replay finds the answers given); marked waiting on the platform once
 * it only waits (`marks`: false for a host that never marks); when the platform takes its
 * VMs, its execution is dropped, and the next answer resumes it by replay of its journal.
 */
class HostedRun {
  readonly journal: JournalEntry[] = [];
  private readonly store = new MemoryRunStore();
  private readonly answers = new Map<string, string>();
  /** The current execution's asks that wait, by effect key. */
  private waiting = new Map<string, (answer: OperatorAnswer) => void>();
  private execution: object | null = null;
  private blocked = false;
  private settle: (outcome: RunOutcome) => void = () => {};
  /** The run's outcome, whichever execution reaches it. */
  readonly outcome = new Promise<RunOutcome>((resolve) => (this.settle = resolve));
  /** How many times the platform took the run's VMs; how many executions it had. */
  reclaimed = 0;
  executions = 0;

  constructor(
    private readonly platform: LuaPlatform,
    private readonly target: Prompt,
    private readonly marks = true,
  ) {
    this.execute();
  }

  /** True while the run's execution is in memory. */
  get inMemory(): boolean {
    return this.execution !== null;
  }

  /** Resolves once the run only waits on its asks (marked waiting). */
  async untilWaiting(): Promise<void> {
    while (!(this.blocked && this.waiting.size > 0)) await turn();
    await turn();
  }

  /** Answers every ask the run waits on, or will ask, with `text`; resumes it by replay when its execution was dropped. */
  answerAll(text: string, keys: string[]): void {
    for (const key of keys) this.answers.set(key, text);
    if (!this.execution) {
      this.execute();
      return;
    }
    const waiting = this.waiting;
    this.waiting = new Map();
    this.moved();
    for (const [key, resolve] of waiting) if (this.answers.has(key)) resolve({ ok: true, text: this.answers.get(key)! });
  }

  /** The effect keys of the asks the run waits on now. */
  get asking(): string[] {
    return [...this.waiting.keys()];
  }

  private execute(): void {
    const owner = {};
    this.execution = owner;
    this.executions++;
    this.waiting = new Map();
    this.blocked = false;
    const run = this;
    const operator: Operator = {
      ask(context: AskContext): Promise<OperatorAnswer> {
        const key = `${context.effect!.chain}:${context.effect!.seq}`;
        const known = run.answers.get(key);
        if (known !== undefined) return Promise.resolve({ ok: true, text: known });
        return new Promise((resolve) => run.waiting.set(key, resolve));
      },
    };
    void runOnHost(
      this.platform,
      { ...fixtureHost({}, [], []), operator },
      {
        prompt: this.target,
        owner,
        store: this.store,
        journal: [...this.journal],
        onJournal: (entry) => {
          if (this.execution === owner) this.journal.push(entry);
        },
        onBlocked: (blocked) => {
          if (this.execution !== owner) return;
          this.blocked = blocked;
          this.moved();
          // Only waiting once every microtask the Engine queued has run, as a run object reads it.
          if (blocked && this.marks)
            setTimeout(() => {
              if (this.execution === owner && this.blocked && this.waiting.size > 0) this.platform.markWaiting(owner, () => this.dropped(owner));
            }, 0);
        },
      },
    ).then((outcome) => {
      if (this.execution !== owner) return;
      this.platform.markRunning(owner);
      this.execution = null;
      this.settle(outcome);
    });
  }

  private moved(): void {
    if (this.execution) this.platform.markRunning(this.execution);
  }

  private dropped(owner: object): void {
    if (this.execution !== owner) return;
    this.execution = null;
    this.reclaimed++;
  }
}

/** Starts `count` runs of `target`, one after another, each waiting before the next starts. */
async function waitingRuns(platform: LuaPlatform, target: Prompt, count: number, marks = true): Promise<{ run: HostedRun; asks: string[] }[]> {
  const runs = [];
  for (let i = 0; i < count; i++) {
    const run = new HostedRun(platform, target, marks);
    await run.untilWaiting();
    runs.push({ run, asks: run.asking });
  }
  return runs;
}

/** What a heavy run of `megabytes` MiB returns. */
const heavyResult = (megabytes: number) => `heavy:${megabytes * MiB}`;

describe('a platform whose Lua memory is full while runs wait on asks', () => {
  it('takes the waiting runs’ VMs, oldest-waiting first, so an honest run larger than each of them completes', async () => {
    const platform = await smallPlatform(32);
    const waiting = await waitingRuns(platform, holdAndAsk(6), 4);
    expect(platform.memoryHeld).toBeGreaterThan(24 * MiB);
    const heavyRun = new HostedRun(platform, heavy(12));
    expect(resultOf(await heavyRun.outcome)).toBe(heavyResult(12));
    const reclaimed = waiting.map(({ run }) => run.reclaimed);
    expect(reclaimed[0]).toBe(1);
    // Oldest first: a run is reclaimed only when every run that waited longer was.
    expect([...reclaimed].sort().reverse()).toEqual(reclaimed);
    expect(reclaimed[3]).toBe(0);
    expect(platform.reclaimedRuns).toBe(reclaimed.reduce((a, b) => a + b, 0));
  });

  it('resumes each reclaimed run by replay, once answered, with the result an uninterrupted run has', async () => {
    const platform = await smallPlatform(32);
    const waiting = await waitingRuns(platform, holdAndAsk(6), 4);
    expect(resultOf(await new HostedRun(platform, heavy(12)).outcome)).toBe(heavyResult(12));
    waiting.forEach(({ run, asks }, i) => run.answerAll(`yes-${i}`, asks));
    const results = await Promise.all(waiting.map(({ run }) => run.outcome.then(resultOf)));
    expect(results).toEqual(waiting.map((_, i) => `yes-${i}:${6 * MiB}`));
    // A reclaimed run paid one replay; the others went on from their VMs.
    for (const { run } of waiting) expect(run.executions).toBe(1 + run.reclaimed);
    expect(waiting[0]!.run.executions).toBe(2);
    expect(platform.memoryHeld).toBe(0);
  });

  it('spares a run answered before the heavy run came: it runs again, and the next oldest waiting goes', async () => {
    const platform = await smallPlatform(32);
    const waiting = await waitingRuns(platform, holdAndAsk(6), 4);
    const [first] = waiting;
    // The oldest waiting run is answered: it runs again, so it is no longer the platform's to take.
    first!.run.answerAll('now', first!.asks);
    expect(resultOf(await new HostedRun(platform, heavy(12)).outcome)).toBe(heavyResult(12));
    expect(resultOf(await first!.run.outcome)).toBe(`now:${6 * MiB}`);
    expect(first!.run.reclaimed).toBe(0);
    expect(waiting[1]!.run.reclaimed).toBe(1);
  });

  it('with no waiting run to take, ends runs as before: the honest run larger than each is refused', async () => {
    const platform = await smallPlatform(32);
    // A host that never marks its runs waiting: they hold their VMs.
    const waiting = await waitingRuns(platform, holdAndAsk(6), 4, false);
    const outcome = await new HostedRun(platform, heavy(12)).outcome;
    expect(outcome.status === 'failed' && outcome.error).toMatchObject({
      kind: 'Limit',
      message: expect.stringContaining("the server's Lua memory of 32 MiB is full"),
    });
    expect(platform.reclaimedRuns).toBe(0);
    for (const { run } of waiting) expect(run.reclaimed).toBe(0);
  });

  it('takes a waiting run’s tasks with it, and its replay gives every task its answer', async () => {
    const platform = await smallPlatform(32);
    const waiting = await waitingRuns(platform, tasksHoldAndAsk(3, 1), 3);
    expect(waiting[0]!.asks).toHaveLength(3);
    expect(resultOf(await new HostedRun(platform, heavy(12)).outcome)).toBe(heavyResult(12));
    expect(waiting[0]!.run.reclaimed).toBe(1);
    waiting.forEach(({ run, asks }) => run.answerAll('ok', asks));
    const each = `ok@${MiB + 1},ok@${MiB + 1},ok@${MiB + 1}`;
    expect(await Promise.all(waiting.map(({ run }) => run.outcome.then(resultOf)))).toEqual([each, each, each]);
  });

  it('takes a waiting fanout’s arms with it, and its replay returns every arm’s result in item order', async () => {
    const platform = await smallPlatform(32);
    const waiting = await waitingRuns(platform, fanoutHoldAndAsk(3, 1), 3);
    expect(resultOf(await new HostedRun(platform, heavy(12)).outcome)).toBe(heavyResult(12));
    expect(waiting[0]!.run.reclaimed).toBe(1);
    waiting.forEach(({ run, asks }) => run.answerAll('arm', asks));
    const each = `arm@${MiB + 1},arm@${MiB + 1},arm@${MiB + 1}`;
    expect(await Promise.all(waiting.map(({ run }) => run.outcome.then(resultOf)))).toEqual([each, each, each]);
  });

  it('lets a reclaimed run be reclaimed again while it waits after its replay, and it still completes', async () => {
    const platform = await smallPlatform(32);
    const waiting = await waitingRuns(platform, holdAndAsk(6), 4);
    expect(resultOf(await new HostedRun(platform, heavy(12)).outcome)).toBe(heavyResult(12));
    const [first] = waiting;
    // Resumed by replay to its ask, which the answers given so far do not cover: it waits again.
    first!.run.answerAll('unused', ['none:0']);
    await first!.run.untilWaiting();
    expect(first!.run.executions).toBe(2);
    expect(resultOf(await new HostedRun(platform, heavy(12)).outcome)).toBe(heavyResult(12));
    first!.run.answerAll('twice', first!.asks);
    expect(resultOf(await first!.run.outcome)).toBe(`twice:${6 * MiB}`);
    expect(first!.run.executions).toBe(first!.run.reclaimed + 1);
  });
});
