/**
 * The run Durable Object: one object per run owns the run's durable state (run-state.ts)
 * and runs the Engine (live-run.ts). An operator ask suspends the run and lists it as
 * pending; an answer resumes it, from the live VM when the object still holds it, by
 * replay of the journal when the object was evicted or restarted, or when the isolate's
 * Lua memory was full and the platform took the suspended run's VMs for another run
 * (live-run.ts). Both give the same result and the same events.
 *
 * Around it: the view it answers with (object-view.ts), the configured Packs a run keeps
 * (run-packs.ts), answers and tool results (../waits/), when its alarm runs (run-alarm.ts)
 * and what it does then (alarm-duties.ts), and its outbox, wired in outbox-wiring.ts (the
 * index rows, notifications and the finished run's KV writes: ../outbox/).
 */
import { DurableObject } from 'cloudflare:workers';
import type { DeploymentConfig, NotifyTarget } from '../../config/deployment-config.ts';
import type { JournalEntry } from '../../engine/journal.ts';
import type { RunOutcome } from '../../engine/run.ts';
import { fileChangesOf } from '../../host/fork.ts';
import type { HostConfig } from '../../host/host.ts';
import { exceptionText, internalRunError, isRuntimeAbort } from '../../host/internal-error.ts';
import { ScriptedOperator, type Operator } from '../../host/operator.ts';
import type { PackSnapshot } from '../../host/remote/configured-packs.ts';
import type { ToolResult } from '../../host/tool-calls.ts';
import { deploymentConfig } from '../deployment/deployment.ts';
import { deploymentBuildOf, packDigests } from '../deployment/deployment-build.ts';
import { runBuild, type DeploymentBuild, type RunBuild } from '../../host/run-build.ts';
import { acrossBuilds } from './build-change.ts';
import { workerHost } from '../deployment/worker-host.ts';
import { textVars, type Env } from '../env.ts';
import { notifyTargetsOf } from '../outbox/notify-targets.ts';
import type { NotificationDelivery, Outbox } from '../outbox/outbox.ts';
import type { OutboxSender } from '../outbox/outbox-sender.ts';
import type { D1Database, KvNamespace } from '../platform-types.ts';
import { callbackOf } from '../waits/call-callback.ts';
import { storedLedgers } from '../waits/stored-waits.ts';
import { postedAnswerText } from '../waits/posted-answer.ts';
import type { Json } from '../../json/json.ts';
import type { WaitKind } from '../../host/waits/wait-ledger.ts';
import { dropIsolatePlatform } from '../workerd-lua/lua-platform.ts';
import { ringAlarm } from './alarm-duties.ts';
import { eventStream, resumePoint, streamUntil } from './event-stream.ts';
import { ModelDeltas } from './model-deltas.ts';
import { abandonEarlierExecution, LiveRun } from './live-run.ts';
import { askInfo, objectViewOf } from './object-view.ts';
import { wireOutbox } from './outbox-wiring.ts';
import { alarmTime, deathsReason, MAX_DEATHS_WITHOUT_PROGRESS } from './run-alarm.ts';
import {
  NO_RUN,
  type AnswerOptions,
  type AnswerOutcome,
  type ForkSource,
  type ForkSpec,
  type Refusal,
  type RunObjectApi,
  type StartSpec,
  type ToolResultOutcome,
  type ViewOutcome,
} from './run-object-api.ts';
import { forkPackSnapshots, prepareRunPacks, withPackSnapshots, withRunPacks } from './run-packs.ts';
import { checkedForkJournal, forkSourceOf, testFileOf } from './run-replays.ts';
import { RunState, type RunMeta } from './run-state.ts';
import { isFinal, type AskRecord, type ObjectView, type RunErrorView, type RunStatus } from './run-view.ts';

/** The run Durable Object. */
export class RunObject extends DurableObject<Env> implements RunObjectApi {
  private readonly state: RunState;
  private live: LiveRun | null = null;
  private readonly listeners = new Set<() => void>();
  /** The model steps' text as it arrives, for the event stream (never stored). */
  private readonly deltas = new ModelDeltas((task) => this.lastStepOf(task));
  private readonly outbox: Outbox;
  private readonly sender: OutboxSender;
  /** The alarm time this object last set (null: none, undefined: not known yet). */
  private alarmAt: number | null | undefined = undefined;
  /** The build this object's execution of the run runs on (known once it is prepared): a Determinism error names it beside the run's own. */
  private executingOn: DeploymentBuild | null = null;

  constructor(ctx: ConstructorParameters<typeof DurableObject<Env>>[0], env: Env) {
    super(ctx, env);
    abandonEarlierExecution(ctx.id.toString());
    this.state = new RunState(ctx.storage);
    this.state.onEvent = (event) => {
      this.deltas.event(event);
      this.notify();
    };
    ({ outbox: this.outbox, sender: this.sender } = wireOutbox({
      storage: ctx.storage,
      state: this.state,
      env,
      targets: () => this.notifyTargets(),
      db: () => this.indexDb(),
      kv: () => this.kv(),
      written: () => this.outboxWritten(),
      wakeBy: (at) => this.wakeBy(at),
      deliver: (request) => this.deliver(request),
      beforeDelivery: (what) => this.beforeDelivery(what),
      executing: () => this.live !== null && this.state.progress().status === 'running',
    }));
  }

  /** The deployment's notify targets (runvil.yaml's `notify:`); tests set their own. */
  protected notifyTargets(): readonly NotifyTarget[] {
    return notifyTargetsOf(this.env);
  }

  /** The index database the outbox writes the run's rows to (the benchmark serves runs without one, to measure the outbox's cost). */
  protected indexDb(): D1Database | undefined {
    return this.env.RUNVIL_DB;
  }

  /** Called once the outbox has written what a change owes, after the change committed (a seam for fault-injection tests). */
  protected outboxWritten(): void {}

  /** Called before each outbox delivery starts (a seam for fault-injection tests). */
  protected beforeDelivery(_what: 'index' | 'notification' | 'kv'): void {}

  /** Sends one notification (a seam for tests that count or fail deliveries). */
  protected deliver(request: Request): Promise<Response> {
    return fetch(request);
  }

  /** The Host a run is served with (tests serve their own). */
  protected host(operator: Operator): HostConfig {
    return workerHost(this.env, operator, this.config());
  }

  /** The deployment's configuration (runvil.yaml, bundled). */
  protected config(): DeploymentConfig {
    return deploymentConfig();
  }

  /** The build this deployment is (its Engine, Lua runtime and configuration), which a run records when it starts. */
  protected deploymentBuild(): Promise<DeploymentBuild> {
    return deploymentBuildOf(this.config());
  }

  /** Called after each new journal entry is committed; a seam for fault-injection tests. */
  protected afterJournal(_index: number, _entry: JournalEntry): void | Promise<void> {}

  /** The KV namespace a finished run is written to (tests count its operations). */
  protected kv(): KvNamespace {
    return this.env.RUNVIL_KV;
  }

  async start(spec: StartSpec, waitMs = 0): Promise<{ created: boolean; view: ObjectView }> {
    if (this.state.meta()) return { created: false, view: await this.viewAfter(waitMs) };
    const build = await this.startedBuild(spec.source);
    // A start that raced this one to the same id (a retried request) created the run meanwhile.
    if (this.state.meta()) return { created: false, view: await this.viewAfter(waitMs) };
    await this.create(spec, build);
    return { created: true, view: await this.viewAfter(waitMs) };
  }

  async fork(spec: ForkSpec, waitMs = 0): Promise<ViewOutcome> {
    if (this.state.meta()) return { ok: false, reason: 'run-exists', status: 409, message: 'this run id already holds a run' };
    // Replayed on the Host the fork runs on (its Packs' manifests: the configured ones as the original kept them), nothing performed.
    const packs = await forkPackSnapshots(spec.packs, spec, this.config(), textVars(this.env), this.env.RUNVIL_KV);
    const host = withPackSnapshots(this.host(new ScriptedOperator([])), packs ?? [], textVars(this.env));
    const checked = await checkedForkJournal(spec, host, this.ctx.id.toString());
    if (!checked.ok) return checked;
    const build = await this.startedBuild(spec.source);
    const digests = packs ? await packDigests(packs) : new Map<string, string>();
    // A request that raced this one to the same id (ids are fresh, so only a retry) started it already.
    if (this.state.meta()) return { ok: false, reason: 'run-exists', status: 409, message: 'this run id already holds a run' };
    await this.create(spec, build, { forked_from: spec.forked_from, journal: checked.journal, packs, digests });
    return { ok: true, view: await this.viewAfter(waitMs) };
  }

  async testFile(): Promise<{ ok: true; text: string } | Refusal> {
    if (!this.state.meta()) return NO_RUN;
    return testFileOf(this.state, withRunPacks(this.state, this.host(new ScriptedOperator([])), textVars(this.env)));
  }

  async forkSource(): Promise<ForkSource | Refusal> {
    if (!this.state.meta()) return NO_RUN;
    return forkSourceOf(this.state);
  }

  /** The build a run of `source` starts on here, but its Packs' (known once it is prepared). */
  private async startedBuild(source: string): Promise<Omit<RunBuild, 'packs'>> {
    const { packs: _packs, ...build } = await runBuild(await this.deploymentBuild(), source);
    return build;
  }

  /** Stores a new run (a fork's with its first journal entries and the files they made) and launches it. */
  private async create(
    spec: StartSpec,
    build: Omit<RunBuild, 'packs'>,
    fork?: { forked_from: { run_id: string; at: number }; journal: JournalEntry[]; packs: PackSnapshot[] | null; digests: ReadonlyMap<string, string> },
  ): Promise<void> {
    const now = Date.now();
    this.state.atomically(() => {
      this.state.create(
        {
          run_id: this.ctx.id.toString(),
          prompt: spec.prompt,
          seed: spec.seed,
          created_at: new Date(now).toISOString(),
          timeout_seconds: spec.timeout_seconds,
          deadline_at: now + spec.timeout_seconds * 1000,
          ...(spec.webhook_id !== undefined ? { webhook_id: spec.webhook_id } : {}),
          ...(spec.untrusted_args?.length ? { untrusted_args: spec.untrusted_args } : {}),
          ...(fork ? { forked_from: fork.forked_from } : {}),
          build,
        },
        spec.source,
        spec.args,
      );
      for (const entry of fork?.journal ?? []) this.state.commitJournal(entry, fileChangesOf(entry));
      // A fork is prepared already: with the original's configured Packs, whatever their servers list now.
      if (fork?.packs) this.state.putPackSnapshots(fork.packs, fork.digests);
    });
    await this.armAlarm();
    this.launch('start');
  }

  async view(): Promise<ObjectView | null> {
    this.wake();
    return this.currentView();
  }

  /** The run's view now, or with `waitMs`, once it is no longer running (or after that long). */
  private async viewAfter(waitMs: number): Promise<ObjectView> {
    return (waitMs > 0 ? await this.settle(waitMs) : null) ?? this.currentView()!;
  }

  /** The run once it is no longer running (suspended or ended), or after `ms` at most. */
  private async settle(ms: number): Promise<ObjectView | null> {
    this.wake();
    if (!this.state.meta()) return null;
    await new Promise<void>((resolve) => {
      const check = () => {
        if (this.state.progress().status === 'running') return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        resolve();
      }, ms);
      this.listeners.add(check);
      check();
    });
    return this.currentView();
  }

  async answer(askId: string, answer: Json, answeredBy: string | null, options: AnswerOptions = {}): Promise<AnswerOutcome> {
    const meta = this.state.meta();
    if (!meta) return NO_RUN;
    const ask = this.state.ask(askId);
    // A form ask's answer is an object that fits its form, taken as its JSON text; any other ask's is a text.
    const posted = postedAnswerText(ask, answer);
    if (!posted.ok) return posted;
    const taking = storedLedgers(this.state).asks.take(askId, { text: posted.text, by: answeredBy }, this.runStatus(), Date.now());
    // A retry of the answer taken (its response was lost) is no error; another answer is.
    if (taking !== 'taken' && taking !== 'retry') return taking;
    // The run goes on (run_resumed); it suspends again once it waits on asks alone.
    if (taking === 'taken') this.waitEnded('ask', askId);
    const outcome = await this.answered(meta, ask!, options);
    // An answer given once only (an MCP request state) is refused when it comes again.
    return taking === 'retry' && outcome.ok ? { ...outcome, repeated: true } : outcome;
  }

  /** An answer's response (AnswerOptions says when it settles). */
  private async answered(meta: RunMeta, ask: AskRecord, { waitMs = 0, indexed = true }: AnswerOptions): Promise<AnswerOutcome> {
    const [view] = await Promise.all([this.viewAfter(waitMs), indexed ? this.outbox.flushIndex() : undefined]);
    return { ok: true, view, ask: askInfo(meta, ask) };
  }

  async toolResult(callId: string, result: ToolResult): Promise<ToolResultOutcome> {
    const meta = this.state.meta();
    if (!meta) return NO_RUN;
    const taking = storedLedgers(this.state).calls.take(callId, result, this.runStatus(), Date.now());
    if (taking !== 'taken' && taking !== 'retry') return taking;
    if (taking === 'taken') this.waitEnded('call', callId);
    return { ok: true };
  }

  /** The run's status, and whether it has ended, for judging a result posted to one of its waits. */
  private runStatus(): { status: RunStatus; ended: boolean } {
    const status = this.state.progress().status;
    return { status, ended: isFinal(status) };
  }

  /**
   * One of the run's waits ended with a result (src/host/waits/wait-ledger.ts): the live run's chain that
   * waits is handed it, or the run, not in memory, is replayed, and its replay finds it.
   */
  private waitEnded(kind: WaitKind, id: string): void {
    if (this.live) (kind === 'ask' ? this.live.broker : this.live.calls).wake(id);
    else this.launch('resume');
    this.refreshStatus();
  }

  async cancel(reason: string): Promise<ViewOutcome> {
    const meta = this.state.meta();
    if (!meta) return NO_RUN;
    const status = this.state.progress().status;
    if (isFinal(status)) return { ok: false, reason: 'run-ended', status: 409, message: `the run has already ended (${status}); there is nothing to cancel` };
    await this.stop(reason);
    return { ok: true, view: this.currentView()! };
  }

  async notifications(): Promise<NotificationDelivery[] | undefined> {
    if (!this.state.meta()) return undefined;
    return this.outbox.deliveries();
  }

  async file(path: string): Promise<string | null | undefined> {
    if (!this.state.meta()) return undefined;
    return this.state.file(path) ?? null;
  }

  async files(prefix: string): Promise<string[] | undefined> {
    if (!this.state.meta()) return undefined;
    return this.state.files(prefix);
  }

  override async fetch(request: Request): Promise<Response> {
    if (!this.state.meta()) return Response.json({ error: { message: 'no such run' } }, { status: 404 });
    this.wake();
    return eventStream(
      {
        events: (after) => this.state.events(after),
        lastSeq: () => this.state.progress().events,
        ended: () => isFinal(this.state.progress().status),
        suspended: () => this.state.progress().status === 'suspended',
        subscribe: (listener) => {
          this.listeners.add(listener);
          return () => this.listeners.delete(listener);
        },
        deltas: this.deltas,
      },
      resumePoint(request),
      streamUntil(request),
    );
  }

  /** The stream's seq of the task's last model_turn_started (a round a replay sends again). */
  private lastStepOf(task: string): number | null {
    const started = this.state.events(0).filter((event) => event.type === 'model_turn_started' && event.task === task);
    return started.at(-1)?.seq ?? null;
  }

  override async alarm(): Promise<void> {
    this.alarmAt = null;
    await ringAlarm({
      state: this.state,
      outbox: this.outbox,
      live: () => this.live,
      resume: () => this.launch('resume'),
      stop: (reason) => this.stop(reason),
      refreshStatus: () => this.refreshStatus(),
      vars: textVars(this.env),
    });
    await this.armAlarm();
  }

  /** Resumes a run that should be executing but is not in memory (its object was evicted or restarted). */
  private wake(): void {
    if (this.state.meta() && this.state.progress().status === 'running') this.launch('resume');
  }

  /**
   * Starts executing the run in memory (a replay of its journal first), unless it already
   * is. A run resumed while its status is `running` was executing in an object that died
   * (a crash, a restart, the CPU limit); after MAX_DEATHS_WITHOUT_PROGRESS such deaths with
   * no new journal entry between them, it ends with Limit instead: its every execution dies
   * at the same point, and replaying it again would only die again.
   */
  private launch(how: 'start' | 'resume'): void {
    if (this.live || isFinal(this.state.progress().status)) return;
    if (how === 'resume' && this.state.progress().status === 'running') {
      const deaths = this.state.noteDeath();
      if (deaths >= MAX_DEATHS_WITHOUT_PROGRESS) {
        const error = { kind: 'Limit', message: deathsReason(deaths) };
        this.state.appendEvent({ type: 'run_failed', section: null, task: '0', turn: 0, error });
        void this.end('failed', { error });
        return;
      }
    }
    const live: LiveRun = new LiveRun({
      state: this.state,
      prepare: async () => {
        await prepareRunPacks(this.state, deploymentConfig(), textVars(this.env), this.env.RUNVIL_KV);
        this.executingOn = await this.deploymentBuild();
      },
      failure: (error) => this.failure(error),
      host: (operator) => withRunPacks(this.state, this.host(operator), textVars(this.env)),
      journaled: (index, entry) => this.afterJournal(index, entry),
      changed: () => this.refreshStatus(),
      // The run stays suspended, out of memory, as after an eviction: an answer launches its replay.
      released: () => {
        if (this.live === live) this.live = null;
      },
      callbacks: (callId) => callbackOf(this.env, this.config(), this.state.meta()!, callId),
      deltas: this.deltas,
    });
    this.live = live;
    live.outcome.then(
      (outcome) => this.finish(live, outcome),
      (error: unknown) => {
        // The exception is for the log; the run's error, which clients read, says what happened in words.
        console.error(`run ${this.state.meta()?.run_id ?? '?'}: the run object failed:`, exceptionText(error));
        if (isRuntimeAbort(error)) dropIsolatePlatform();
        return this.finish(live, { status: 'failed', error: internalRunError(error), events: [], journal: [] });
      },
    );
  }

  /** Cancels the run: a live one stops at its next effect or instruction check; one not in memory ends at once. */
  private async stop(reason: string): Promise<void> {
    const live = this.live;
    if (live) {
      live.cancel(reason);
      // launch() subscribed finish() first, and finish() records the end before its first
      // await, so the run has ended by the time this wait is over.
      await live.outcome.catch(() => undefined);
      return;
    }
    const error = { kind: 'Cancelled', message: `the run was cancelled: ${reason}` };
    this.state.appendEvent({ type: 'run_failed', section: null, task: '0', turn: 0, error });
    await this.end('cancelled', { error });
  }

  private async finish(live: LiveRun, outcome: RunOutcome): Promise<void> {
    if (this.live !== live) return;
    this.live = null;
    if (outcome.status === 'completed') await this.end('completed', { result: outcome.result });
    else {
      const error = this.failure({ kind: outcome.error.kind, message: outcome.error.message });
      // A replay that diverged before it caught up with the stream made its run_failed under a seq the stream holds, so it was not stored.
      if (error.kind === 'Determinism' && this.state.events(this.state.progress().events - 1).at(-1)?.type !== 'run_failed')
        this.state.appendEvent({ type: 'run_failed', section: null, task: '0', turn: 0, error: error as unknown as Json });
      await this.end(error.kind === 'Cancelled' ? 'cancelled' : 'failed', { error });
    }
  }

  /** How the run's failure reads: a Determinism error on another build than the run's own names both (build-change.ts). */
  private failure(error: RunErrorView): RunErrorView {
    return acrossBuilds(error, this.state.build(), this.executingOn);
  }

  /**
   * Records how the run ended and closes its open asks. The alarm writes the run to KV a
   * moment later, after the answer to the request that ended the run is out (reading every
   * event back takes a while for a long run), in batches over as many invocations as the
   * run's files need, and retries if a write fails.
   */
  private async end(status: RunStatus, how: { result?: string; error?: { kind: string; message: string } }): Promise<void> {
    const endedAt = new Date().toISOString();
    this.state.atomically(() => {
      const { asks, calls } = storedLedgers(this.state);
      asks.closeAll(Date.parse(endedAt));
      calls.closeAll(Date.parse(endedAt));
      this.state.setStatus(status, { ...how, ended_at: endedAt });
    });
    this.sender.settled();
    this.notify();
    await this.armAlarm();
  }

  /**
   * Suspended when the live run can go no further until an ask is answered (LiveRun's
   * `suspended`), running otherwise; records each change with its event. A run not in
   * memory keeps its status: suspended until an answer launches it, running until the
   * alarm or a request resumes it.
   */
  private refreshStatus(): void {
    const progress = this.state.progress();
    if (isFinal(progress.status) || !this.live) return;
    const next: RunStatus = this.live.suspended ? 'suspended' : 'running';
    if (next === progress.status) return;
    this.state.atomically(() => {
      this.state.setStatus(next);
      this.state.appendEvent({ type: next === 'suspended' ? 'run_suspended' : 'run_resumed' });
    });
    if (next === 'suspended') this.sender.settled();
    this.notify();
    void this.armAlarm();
  }

  /** Sets the alarm for the earliest of the run's duty (run-alarm.ts), the outbox's next delivery, and the next ask and call deadlines. */
  private async armAlarm(): Promise<void> {
    if (!this.state.meta()) return;
    const at = alarmTime(this.state, this.outbox.nextDue(), Date.now());
    this.alarmAt = at;
    if (at === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(at);
  }

  /** Makes sure the alarm runs by `at` (the outbox has something to deliver then). */
  private async wakeBy(at: number): Promise<void> {
    const current = this.alarmAt === undefined ? await this.ctx.storage.getAlarm() : this.alarmAt;
    if (current !== null && current <= at) return;
    this.alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private currentView(): ObjectView | null {
    return objectViewOf(this.state);
  }
}
