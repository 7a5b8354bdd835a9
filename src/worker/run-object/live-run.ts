/**
 * One execution of a run in the run object's memory: the Engine over the run's journal
 * (a replay first, when there is one), with every new journal entry committed, with the
 * file changes it made, before Lua sees its answer, and every new event appended to the
 * stream. It also tells whether the run is suspended: no chain can go on until an effect is
 * answered, and every effect in flight is an operator ask or a tool call whose service
 * answered 202 (call-broker.ts).
 *
 * A run with tasks goes on while one of its chains waits on an ask, so an ask alone does
 * not suspend it. The Engine says when the run is blocked (`onBlocked`): true when no chain
 * can run until some effect is answered, false when a step starts again. A chain the Engine
 * pauses in a long computation (every million instructions, letting the event loop run) is
 * runnable, so the run is not blocked while it computes. Blocked is not yet suspended: the
 * effects the run waits on may be tool calls or model rounds, which are counted while in
 * flight here, with the journal commit of every answer; suspended is blocked with nothing in
 * flight but asks.
 *
 * The verdict waits until the Engine has caught up. When an answer lands, `blocked` stays
 * true until the scheduler's next step, which starts in microtasks after the answer's
 * journal commit; a store effect, not counted here, is performed and answered in microtasks
 * too. So after any change the event loop runs once before the run may read as suspended:
 * by then every microtask the Engine queued has run, and `blocked` and the counts agree. (A
 * paused chain lets the event loop run too, but the run is not blocked then.) A run reads
 * as running again at once.
 *
 * A suspended run needs no VM until an answer comes, so while it reads as suspended it is
 * marked waiting on the isolate's platform (LuaPlatform.markWaiting): when the isolate's Lua
 * memory is full, the platform may close its VMs for another run. The execution then lets go
 * (`released`), and the run object resumes the run by replay of its journal when the answer
 * comes, as after an eviction. Suspended means nothing is half done: no tool call or model
 * round in flight, every journal entry committed.
 *
 * With `deltas`, the model rounds stream: each piece of a step's text goes to the run
 * object's ModelDeltas (model-deltas.ts) for the event stream, never to the journal; the
 * round's signal is the run's, so a cancel closes the provider's stream.
 */
import type { JournalEntry } from '../../engine/journal.ts';
import type { RunOutcome } from '../../engine/run.ts';
import type { ModelDelta } from '../../host/harness.ts';
import { runOnHost, type HostConfig } from '../../host/host.ts';
import type { ModelDirectory } from '../../models/provider.ts';
import type { Operator } from '../../host/operator.ts';
import type { Pack } from '../../host/pack.ts';
import { parsePromptCached } from '../deployment/parsed-prompts.ts';
import { AskBroker } from '../waits/ask-broker.ts';
import { CallBroker } from '../waits/call-broker.ts';
import { StoredCallRounds } from '../waits/stored-call-rounds.ts';
import { DurableRunStore } from './durable-store.ts';
import { isolatePlatform } from '../workerd-lua/lua-platform.ts';
import type { LuaPlatform } from '../../engine/lua/vm.ts';
import type { RunState } from './run-state.ts';
import type { RunErrorView } from './run-view.ts';
import type { Json } from '../../json/json.ts';
import type { ModelDeltas } from './model-deltas.ts';

/**
 * True for an entry whose effect reaches the world outside the run (a tool call or a model
 * round): performing it again after a crash would show. An operator ask is not one: its
 * answer is durable in the ask's record before the answer route responds, and a replay takes
 * it from there (so a resume by answer pays no wait).
 */
const reachesOutside = (entry: JournalEntry): boolean =>
  entry.request.op === 'model.round' || (entry.request.op === 'tool.call' && entry.request.tool !== 'user-input/ask');

/** What a live run is built with. */
export interface LiveRunOptions {
  state: RunState;
  /** Done before the run's first step (reads the configured Packs' tool lists when the run has none yet). */
  prepare?: () => Promise<void>;
  host: (operator: Operator) => HostConfig;
  /** Called after each new journal entry commits (its index counts from 1; a tool call's or model round's once durable too), before Lua sees its answer. */
  journaled: (index: number, entry: JournalEntry) => void | Promise<void>;
  /** Called whenever the run may have become suspended or running again (see `suspended`). */
  changed: () => void;
  /**
   * Called when the platform took the suspended run's VMs for another run: this execution is
   * over, and an answer resumes the run by replay. Called inside another run's allocation, so
   * it may only let go of things (no I/O, no Lua).
   */
  released: () => void;
  /** The callback URL and token of a tool call that may answer later. */
  callbacks: (callId: string) => Promise<{ url: string; token: string }>;
  /** Where the model steps' text goes as it arrives (the event stream's watchers); the rounds stream only with it. */
  deltas?: ModelDeltas;
  /** How the run's failure reads in its `run_failed` event (the run object's own end says the same: build-change.ts). */
  failure?: (error: RunErrorView) => RunErrorView;
}

/**
 * The runs executing in this isolate, by run id. A run object whose memory is dropped (an
 * eviction, a reset) leaves its LiveRun behind, with the VMs of the entries it was in:
 * nothing drives them again, but they hold their memory until the run's next object in this
 * isolate closes them (abandonEarlierExecution).
 */
const executing = new Map<string, LiveRun>();

/**
 * Closes the VMs a dropped object of run `runId` left behind, if this isolate holds any.
 * Called by every new run object: a Durable Object has one instance at a time, so a LiveRun
 * of the same run that is still registered belongs to an instance that is gone.
 */
export function abandonEarlierExecution(runId: string): void {
  executing.get(runId)?.abandon();
  executing.delete(runId);
}

/** A run executing in memory. */
export class LiveRun {
  readonly broker: AskBroker;
  /** The run's tool calls that may answer later. */
  readonly calls: CallBroker;
  readonly outcome: Promise<RunOutcome>;
  private readonly controller = new AbortController();
  /** Tool calls (asks among them), model rounds and journal commits under way. */
  private inflight = 0;
  /** What the Engine last said (`onBlocked`): no chain can run until an effect is answered. */
  private blocked = false;
  /** True when the event loop has run since anything last changed (see `stirred`). */
  private settled = false;
  private lookAgain: ReturnType<typeof setTimeout> | null = null;
  /** The last journal entry committed, and the last one known durable. */
  private committed = 0;
  private durableUpTo = 0;
  private platform: LuaPlatform | null = null;
  /** True once the platform took the run's VMs (`released`): nothing of this execution may reach the run's state again. */
  private released = false;
  /** Read once: `release` runs inside another run object's request, which may not read this one's storage. */
  private readonly runId: string;

  constructor(private readonly options: LiveRunOptions) {
    this.broker = new AskBroker(options.state, () => this.stirred());
    this.calls = new CallBroker(options.state, options.callbacks, () => this.stirred());
    const runId = options.state.meta()!.run_id;
    this.runId = runId;
    abandonEarlierExecution(runId);
    executing.set(runId, this);
    this.outcome = this.run();
    const forget = () => {
      this.platform?.markRunning(this);
      if (executing.get(runId) === this) executing.delete(runId);
    };
    this.outcome.then(forget, forget);
  }

  /** Closes the VMs of a run whose object is gone, where they stand: nothing will drive them again. */
  abandon(): void {
    this.platform?.markRunning(this);
    this.platform?.closeVmsOf(this);
  }

  /** True when the run can go no further without an answer: the Engine is blocked, and every effect in flight waits on an operator or a tool service's result. */
  get suspended(): boolean {
    const waiting = this.broker.waitingCount + this.calls.waitingCount;
    return this.blocked && this.settled && waiting > 0 && this.inflight <= waiting;
  }

  /** Stops the run at its next effect or instruction check; it ends as Cancelled with `reason`. */
  cancel(reason: string): void {
    this.controller.abort(reason);
  }

  private async run(): Promise<RunOutcome> {
    const { state } = this.options;
    const meta = state.meta()!;
    const parsed = parsePromptCached(state.source(), `${meta.prompt}.md`);
    if (!parsed.ok) throw new Error(`the run's prompt no longer parses: ${parsed.errors[0]?.message}`);
    const store = new DurableRunStore(state);
    const platform = await isolatePlatform();
    this.platform = platform;
    await this.options.prepare?.();
    return runOnHost(platform, this.counted(this.options.host(this.broker)), {
      owner: this,
      prompt: parsed.prompt,
      args: state.args(),
      ...(meta.untrusted_args ? { untrustedArgs: meta.untrusted_args } : {}),
      seed: meta.seed,
      runId: meta.run_id,
      store,
      journal: state.journal(),
      // The stream holds these already: a replay emits them again, and they would be skipped.
      eventsKnown: state.progress().engine_events,
      signal: this.controller.signal,
      ...(this.options.deltas ? { onModelDelta: this.modelDelta(this.options.deltas) } : {}),
      onBlocked: (blocked) => {
        this.blocked = blocked;
        this.stirred();
      },
      onJournal: (entry) =>
        this.track(async () => {
          // Nothing runs in a released execution (its VMs are closed); were anything to, its
          // entries would be the replay's to write.
          if (this.released) return new Promise<never>(() => {});
          const index = state.commitJournal(entry, store.changesFor(entry));
          this.committed = index;
          // The answer of a tool call or a model round is durable before Lua sees it: Lua
          // may compute in C for seconds next, with no turn of the event loop that would
          // flush the write, and a crash then would perform the effect again. Other
          // entries (store effects, sys.now, step records) only commit here; they are
          // durable before the next tool call or model round starts (counted()).
          if (reachesOutside(entry)) await this.durable();
          await this.options.journaled(index, entry);
        }),
      onEvent: (event) => {
        if (this.released) return;
        // A cancelled task asks no more: its pending asks (and its own tasks') close.
        if (event.type === 'task_cancelled') {
          this.broker.closeAsksOf(event.task);
          this.calls.closeCallsOf(event.task);
        }
        // Stored under the stream's own seq (appendEvent numbers it). A replay does not emit
        // the events the stream holds (eventsKnown); appendEvent would skip them too.
        const failure = this.options.failure;
        if (failure && event.type === 'run_failed') event = { ...event, error: failure(event.error as unknown as RunErrorView) as unknown as Json };
        const stored = state.appendEvent(event, event.seq);
        if (stored && event.type === 'model_turn_started') this.options.deltas?.started(event.task, event.seq, stored.seq);
      },
    });
  }

  /** The Host's delta listener: a released execution's rounds are over, and tell nothing. */
  private modelDelta(deltas: ModelDeltas): (delta: ModelDelta) => void {
    return (delta) => {
      if (!this.released) deltas.take(delta);
    };
  }

  /**
   * Something changed (the Engine blocked or moved again, an effect began or ended, an ask
   * came or was answered). The run is looked at now, when it can only read as running, and
   * again once the event loop has run, after every microtask the Engine queued: if nothing
   * else changed by then, the Engine's `blocked` and the counts in flight agree.
   */
  private stirred(): void {
    if (this.released) return;
    this.settled = false;
    this.platform?.markRunning(this);
    this.lookAgain ??= setTimeout(() => {
      this.lookAgain = null;
      if (this.released) return;
      this.settled = true;
      if (this.suspended) this.platform?.markWaiting(this, () => this.release());
      this.options.changed();
    }, 0);
    this.options.changed();
  }

  /**
   * The platform closed the suspended run's VMs for another run (vm-memory.ts, makeRoom):
   * this execution is over. It only lets go here, inside that run's allocation.
   */
  private release(): void {
    this.released = true;
    if (executing.get(this.runId) === this) executing.delete(this.runId);
    this.options.released();
  }

  /** Counts `work` as in flight while it runs. */
  private async track<T>(work: () => Promise<T>): Promise<T> {
    this.inflight++;
    this.stirred();
    try {
      return await work();
    } finally {
      this.inflight--;
      this.stirred();
    }
  }

  /**
   * Settles once every committed journal entry is durable. A tool call or a model round
   * waits on it before it starts, so an effect never runs on the strength of an answer a
   * crash could still lose, and its own answer waits on it before Lua sees it (onJournal):
   * a crash repeats at most the tool calls and model rounds in flight. Nothing else waits:
   * the object's output gate already holds every response and event it sends out until its
   * writes are durable, and a store effect or a clock read lost with a crash is performed
   * again on the files as they were, which no one outside the run can tell.
   */
  private async durable(): Promise<void> {
    if (this.durableUpTo >= this.committed) return;
    const target = this.committed;
    await this.options.state.durable();
    this.durableUpTo = Math.max(this.durableUpTo, target);
  }

  /** The Host with its tool calls and model rounds counted while in flight, each started once the journal is durable. */
  private counted(host: HostConfig): HostConfig {
    const track = <T>(work: () => Promise<T>): Promise<T> =>
      this.track(async () => {
        await this.durable();
        return work();
      });
    const packs = host.packs.map((pack): Pack => ({
      manifest: pack.manifest,
      call: (tool, args, context) => track(() => pack.call(tool, args, context)),
      ...(pack.unavailableReason ? { unavailableReason: (services) => pack.unavailableReason!(services) } : {}),
      ...(pack.dispose ? { dispose: () => pack.dispose!() } : {}),
    }));
    const models: ModelDirectory = {
      provider(config, role) {
        const provider = host.models.provider(config, role);
        return typeof provider === 'string' ? provider : { round: (request, signal, onDelta) => track(() => provider.round(request, signal, onDelta)) };
      },
    };
    return { ...host, packs, models, calls: this.calls, rounds: new StoredCallRounds(this.options.state) };
  }
}
