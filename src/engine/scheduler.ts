/**
 * The scheduler: runs the chains of one run (the main walk `0`, tasks, fanout arms) so that
 * they interleave at effects and a run with concurrent chains still replays exactly.
 *
 * A chain runs only when the scheduler releases it, and then alone: its Lua runs
 * synchronously until the chain parks again (on effects, on other chains, or paused by the
 * count hook) or ends. A *step* releases a set of parked chains one at a time, in the order
 * the chains were created (the main chain first); the live effects parked during the step
 * go to the Harness together when it ends. What is ready for the next step depends on
 * which answers have landed, which is timing, so a step that leaves a chain waiting on an
 * effect is journaled: a record under the chain `scheduler` keyed by the step's number,
 * listing the chains it released. A replay follows the records, so it releases the same
 * chains at the same steps whatever order the answers come in; a step without a record
 * released every chain that could run. A run with one chain never journals a step.
 *
 * While a replay has journal entries left, an effect the journal lacks waits, unsent,
 * until the journal is used up: only then is the replay past what the journal recorded,
 * and the Harness sees only effects the journaled run never got answers for.
 */
import type { RunError } from './errors.ts';
import { failed, type EffectAnswer, type EffectRequest } from './effects.ts';
import { DeterminismViolation, type EffectRunner } from './journal.ts';
import { StepClaims } from './step-claims.ts';
import type { StopSwitch } from './budget.ts';

/** Where a parked chain stands. */
type Phase =
  /** Runnable whatever the timing: new, paused, woken by other chains, or cancelled. */
  | 'ready'
  /** Parked on effects whose answers have not all landed. */
  | 'effect'
  /** Parked on effects whose answers are all in. */
  | 'answered'
  /** Parked until a condition on other chains holds. */
  | 'waiting'
  | 'running'
  | 'done';

interface Chain {
  readonly id: string;
  phase: Phase;
  /** Resumes the chain's driver where it parked. */
  resume: (() => void) | null;
  /** Counts the chain's releases, so an answer to an abandoned wait is recognized. */
  release: number;
  answers: EffectAnswer[];
  pending: number;
  until: (() => boolean) | null;
  /** Why the chain must end (a task or arm cancelled), or null. */
  cancelled: RunError | null;
}

/** A live effect parked in a step, waiting to go to the Harness. */
interface Queued {
  chain: Chain;
  release: number;
  index: number;
  seq: number;
  request: EffectRequest;
  section: string | null;
}

/** One effect a chain parks on, with the section that asks (the Harness's records). */
export interface ParkedEffect {
  request: EffectRequest;
  section: string | null;
}

/** What the scheduler works with. */
export interface SchedulerOptions {
  runId: string;
  effects: EffectRunner;
  stop: StopSwitch;
  /**
   * Lets the host's event loop run (a macrotask). Given when someone outside may cancel the
   * run: after a step in which a looping chain paused, the scheduler waits on this so the
   * cancellation can arrive.
   */
  yieldToHost?: () => Promise<void>;
  /**
   * Told true when no chain can run until an effect is answered (the run is waiting on the
   * outside, on an operator's ask say), and false when a step starts again: a Host that
   * suspends runs needs to know, and cannot tell from timing.
   */
  onBlocked?: (blocked: boolean) => void;
}

/** The id of the main chain. */
export const MAIN_CHAIN = '0';

/** Runs a run's chains one at a time in a deterministic order. */
export class Scheduler {
  /** Live chains, in the order they were created: the order a step releases them in. */
  private readonly chains: Chain[] = [];
  private readonly byId = new Map<string, Chain>();
  private readonly claims = new StepClaims();
  private queue: Queued[] = [];
  private steps = 0;
  private inflight = 0;
  private pausedInStep = false;
  private current: Chain | null = null;
  private onParked: (() => void) | null = null;
  private onArrival: (() => void) | null = null;
  private crash: { error: unknown } | null = null;

  constructor(private readonly options: SchedulerOptions) {
    void options.stop.whenStopped.then(() => this.arrived());
  }

  /**
   * Runs the main chain's body, and every chain it starts, until the main chain ends; then
   * ends the chains still parked (cancelled by the body, or by the stop) so their VMs close.
   */
  async run<T>(body: () => Promise<T>): Promise<T> {
    let result: { value: T } | null = null;
    const main = this.addChain(MAIN_CHAIN, async () => {
      result = { value: await body() };
    });
    try {
      while (main.phase !== 'done') {
        const step = await this.nextStep();
        for (const chain of step) await this.releaseChain(chain);
        this.rethrow();
        this.flush();
        if (this.pausedInStep && this.options.yieldToHost) await this.options.yieldToHost();
        this.pausedInStep = false;
      }
      await this.endAll();
      this.rethrow();
    } catch (error) {
      // A bug (or a journal that cannot be written): still close every chain's VM, since the
      // wasm heap outlives the run.
      this.crash ??= { error };
      await this.endAll().catch(() => {});
      throw this.crash.error;
    } finally {
      this.options.effects.close();
    }
    return (result as { value: T } | null)!.value;
  }

  /** Ends the chains still parked: each is released once, cancelled, and unwinds. */
  private async endAll(): Promise<void> {
    for (let round = 0; this.chains.length > 0 && round < 100; round++) {
      const left = this.chains.filter((chain) => chain.phase !== 'running');
      for (const chain of left) this.cancel(chain.id, chain.cancelled ?? { kind: 'Cancelled', message: 'the run ended' });
      for (const chain of left) await this.releaseChain(chain);
    }
  }

  /** Adds a chain; its body starts at its first release (in the next step). */
  add(id: string, body: () => Promise<void>): void {
    this.addChain(id, body);
  }

  /** Why the chain must stop (the run stopping, or the chain cancelled), or null. */
  stopOf(id: string): RunError | null {
    return this.options.stop.stopped ?? this.byId.get(id)?.cancelled ?? null;
  }

  /**
   * Marks a chain cancelled: it ends at its next release, without running more Lua. A
   * chain parked on effects stops waiting for them; their answers, if they land, are
   * journaled and dropped.
   */
  cancel(id: string, error: RunError): void {
    const chain = this.byId.get(id);
    if (!chain || chain.phase === 'done') return;
    chain.cancelled ??= error;
    if (chain.phase !== 'running') chain.phase = 'ready';
  }

  /** Claims a var key for the running chain; the conflict's message, or null. */
  claimVar(id: string, key: string | number): string | null {
    return this.claims.claimVar(id, key);
  }

  /**
   * Answers the running chain's effects at once, when it is the only chain and the journal
   * holds every answer: the next step would release it alone straight away, so this is that
   * step. Null when the effects must park.
   */
  answerNow(id: string, requests: EffectRequest[], section?: string | null): EffectAnswer[] | null {
    if (!this.canAnswerNow(id, requests.length)) return null;
    const answers = requests.map((request) => this.claim(id, request, section).answer!);
    this.beginStep(this.steps + 1);
    return answers;
  }

  /** Whether answerNow would answer `count` effects of the running chain (checked before they are built). */
  canAnswerNow(id: string, count: number): boolean {
    const chain = this.byId.get(id);
    return !!chain && chain === this.current && this.aloneAtStepEnd() && this.options.effects.holds(id, count);
  }

  /**
   * True when the running chain is the only one, nothing waits or is in flight, and the
   * journal holds no step next: the next step would release it alone at once, so a chain
   * with every answer at hand may take that step without parking (answerNow, park).
   */
  private aloneAtStepEnd(): boolean {
    return (
      this.chains.length === 1 &&
      this.queue.length === 0 &&
      this.inflight === 0 &&
      !this.pausedInStep &&
      !this.options.stop.stopped &&
      !this.options.effects.hasStep(this.steps + 1)
    );
  }

  /**
   * Claims an effect's journal entry (its answer when the journal holds one). A request the
   * journal holds differently ends the run with Determinism, and answers as a failure.
   */
  private claim(id: string, request: EffectRequest, section: string | null | undefined): { answer?: EffectAnswer; seq: number } {
    try {
      return this.options.effects.claim(id, request, section);
    } catch (error) {
      if (!(error instanceof DeterminismViolation)) throw error;
      this.options.stop.fail({ kind: 'Determinism', message: error.message });
      return { answer: failed('determinism', error.message), seq: -1 };
    }
  }

  /** Parks the running chain on effects; resolves with their answers when it is released again. */
  async park(id: string, effects: ParkedEffect[]): Promise<EffectAnswer[]> {
    const chain = this.running(id);
    const stopped = this.stopOf(id);
    if (stopped) return effects.map(() => failed('cancelled', stopped.message));
    const answers: EffectAnswer[] = [];
    let pending = 0;
    effects.forEach(({ request, section }, index) => {
      const conflict = this.claims.claimStore(id, request);
      if (conflict) {
        this.options.stop.fail({ kind: 'Determinism', message: conflict });
        answers[index] = failed('determinism', conflict);
        return;
      }
      const claimed = this.claim(id, request, section);
      if (claimed.answer) answers[index] = claimed.answer;
      else {
        pending++;
        this.queue.push({ chain, release: chain.release, index, seq: claimed.seq, request, section });
      }
    });
    // The only chain, with every answer at hand (a replay, say): the next step would release
    // it alone at once, so it is that step, without parking.
    if (pending === 0 && this.aloneAtStepEnd()) {
      this.beginStep(this.steps + 1);
      return answers;
    }
    chain.answers = answers;
    chain.pending = pending;
    await this.hold(chain, pending > 0 ? 'effect' : 'answered');
    // Released before every answer landed: the chain is stopping, and unanswered effects say so.
    const stopping = () => failed('cancelled', this.stopOf(id)?.message ?? 'the chain is stopping');
    return effects.map((_, index) => answers[index] ?? stopping());
  }

  /** Parks the running chain until `done()` holds (checked as other chains run); no wait when it holds now. */
  async waitUntil(id: string, done: () => boolean): Promise<void> {
    if (done()) return;
    const chain = this.running(id);
    chain.until = done;
    await this.hold(chain, 'waiting');
  }

  /** Parks a chain the count hook paused; it runs again in the next step. */
  async pause(id: string): Promise<void> {
    this.pausedInStep = true;
    await this.hold(this.running(id), 'ready');
  }

  private addChain(id: string, body: () => Promise<void>): Chain {
    const chain: Chain = { id, phase: 'ready', resume: null, release: 0, answers: [], pending: 0, until: null, cancelled: null };
    this.chains.push(chain);
    this.byId.set(id, chain);
    const started = new Promise<void>((resolve) => {
      chain.resume = resolve;
    });
    void (async () => {
      await started;
      try {
        await body();
      } catch (error) {
        this.crash ??= { error };
      }
      chain.phase = 'done';
      chain.answers = [];
      this.chains.splice(this.chains.indexOf(chain), 1);
      this.parked();
    })();
    return chain;
  }

  private running(id: string): Chain {
    const chain = this.byId.get(id);
    if (!chain || chain !== this.current) throw new Error(`chain ${id} parked while another chain was running`);
    return chain;
  }

  /** Parks the running chain in `phase`; resolves at its next release. */
  private hold(chain: Chain, phase: Phase): Promise<void> {
    chain.phase = phase;
    const released = new Promise<void>((resolve) => {
      chain.resume = resolve;
    });
    this.parked();
    return released;
  }

  private parked(): void {
    const onParked = this.onParked;
    this.onParked = null;
    onParked?.();
  }

  /** Runs one chain until it parks again or ends, then wakes the chains whose wait is over. */
  private async releaseChain(chain: Chain): Promise<void> {
    if (chain.phase === 'done' || chain.phase === 'running') return;
    const resume = chain.resume!;
    chain.resume = null;
    chain.phase = 'running';
    chain.release++;
    chain.until = null;
    this.current = chain;
    const parked = new Promise<void>((resolve) => {
      this.onParked = resolve;
    });
    resume();
    await parked;
    this.current = null;
    for (const other of this.chains) {
      if (other.phase === 'waiting' && other.until?.()) other.phase = 'ready';
    }
  }

  /** The chains the next step releases, journaling the step when the choice was timing's. */
  private async nextStep(): Promise<Chain[]> {
    for (;;) {
      this.rethrow();
      const parked = this.chains.filter((chain) => chain.phase !== 'running');
      // A stopping run releases every chain so each can unwind.
      if (this.options.stop.stopped) return parked;
      const number = this.steps + 1;
      const recorded = this.options.effects.takeStep(number);
      if (recorded) {
        const problem = this.checkRecord(number, recorded);
        if (problem) {
          this.options.stop.fail({ kind: 'Determinism', message: problem });
          continue;
        }
        this.beginStep(number);
        return recorded.map((id) => this.byId.get(id)!);
      }
      const runnable = parked.filter((chain) => chain.phase === 'ready' || chain.phase === 'answered');
      if (runnable.length > 0) {
        this.beginStep(number);
        if (parked.some((chain) => chain.phase === 'effect')) {
          await this.options.effects.recordStep(
            number,
            runnable.map((chain) => chain.id),
          );
        }
        return runnable;
      }
      this.flush();
      if (this.inflight === 0) {
        this.stuck(parked);
        continue;
      }
      this.setBlocked(true);
      await new Promise<void>((resolve) => {
        this.onArrival = resolve;
      });
    }
  }

  private blocked = false;

  private setBlocked(blocked: boolean): void {
    if (this.blocked === blocked) return;
    this.blocked = blocked;
    this.options.onBlocked?.(blocked);
  }

  private beginStep(number: number): void {
    this.setBlocked(false);
    this.steps = number;
    this.claims.nextStep();
  }

  /** Why a journaled step cannot be what this run does now, or null when it can. */
  private checkRecord(number: number, recorded: string[]): string | null {
    const listed = new Set(recorded);
    const unfit = recorded.find((id) => {
      const phase = this.byId.get(id)?.phase;
      return phase !== 'ready' && phase !== 'answered';
    });
    const left = this.chains.find((chain) => chain.phase === 'ready' && !listed.has(chain.id));
    if (unfit === undefined && left === undefined) return null;
    const why = unfit !== undefined ? `chain ${unfit} cannot run now` : `chain ${left!.id} could run but is not listed`;
    return `the run diverged from its journal at scheduler step ${number}: the journal released ${recorded.join(', ')}, but ${why}`;
  }

  /** Nothing can run and nothing is in flight. */
  private stuck(parked: Chain[]): void {
    if (this.queue.length > 0 || this.options.effects.replaying) {
      this.options.stop.fail({
        kind: 'Determinism',
        message: `the run cannot reach the rest of its journal: ${this.options.effects.unconsumed()} journaled entries remain, but every chain waits on an effect the journal does not hold (the first entry it cannot reach: ${this.options.effects.firstUnreached()})`,
      });
      return;
    }
    // Every chain waits on another; the run cannot go on.
    this.options.stop.fail({
      kind: 'Lua',
      message: `every chain of the run waits on another (${parked.map((chain) => chain.id).join(', ')}), so none can go on`,
    });
  }

  /** Sends the effects parked so far to the Harness, in the order they parked, unless a replay still runs. */
  private flush(): void {
    if (this.options.effects.replaying || this.queue.length === 0) return;
    const queued = this.queue;
    this.queue = [];
    for (const item of queued) {
      if (item.chain.release !== item.release || item.chain.cancelled || this.options.stop.stopped) continue;
      this.inflight++;
      this.options.effects.perform(item.chain.id, item.seq, item.request, item.section, this.options.runId).then(
        (answer) => {
          this.inflight--;
          const chain = item.chain;
          if (chain.release === item.release && chain.phase === 'effect') {
            chain.answers[item.index] = answer;
            if (--chain.pending === 0) chain.phase = 'answered';
          }
          this.arrived();
        },
        (error: unknown) => {
          this.inflight--;
          // A Host that finds the run off the recording it answers from (a test file's
          // `recorded:`) ends the run as a journal that differs would.
          if (error instanceof DeterminismViolation) this.options.stop.fail({ kind: 'Determinism', message: error.message });
          else this.crash ??= { error };
          this.arrived();
        },
      );
    }
  }

  private arrived(): void {
    const onArrival = this.onArrival;
    this.onArrival = null;
    onArrival?.();
  }

  private rethrow(): void {
    if (this.crash) throw this.crash.error;
  }
}
