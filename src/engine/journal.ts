/**
 * The journal: every effect's request and answer, keyed by (chain, sequence number).
 * Replaying a run over its journal reproduces it without calling the Harness again.
 */
import { sameJson } from '../json/canonical-json.ts';
import { failed, journaled, type EffectAnswer, type EffectContext, type EffectRequest, type Harness, type StepRequest } from './effects.ts';
import type { RunMeter } from './run-meter.ts';
import { differenceWords, effectWords, sectionWords } from './effect-words.ts';

/** The chain id the scheduler's step records are journaled under (no chain id is a word). */
export const SCHEDULER_CHAIN = 'scheduler';

/** One journaled effect, or one scheduler step record. */
export interface JournalEntry {
  chain: string;
  seq: number;
  request: EffectRequest | StepRequest;
  answer: EffectAnswer;
}

/** Raised inside the Engine when a replay asks for something other than what the journal holds. */
export class DeterminismViolation extends Error {}

/**
 * Performs effects for one run: answers from the journal while it lasts (checking that the
 * run asks for the same thing), then from the Harness, journaling each new answer before
 * handing it back. It also keeps the scheduler's step records (scheduler.ts), journaled
 * under the chain `scheduler`.
 */
export class EffectRunner {
  /** The journal to replay: each chain's entries, indexed by sequence number. */
  private readonly recorded = new Map<string, JournalEntry[]>();
  /** The journal to replay, in its order, for saying which entry a run never reached. */
  private readonly replay: readonly JournalEntry[];
  private recordedCount = 0;
  private readonly nextSeq = new Map<string, number>();
  private readonly entries: JournalEntry[] = [];
  private replayedCount = 0;
  private closed = false;

  /** The run's caps on files and on the journal (run-meter.ts). */
  meter: RunMeter | undefined;

  /** The journaled entry at the first step where the run asked for something else, once it has. */
  divergedAt: JournalEntry | undefined;

  /** Called once, when the run has taken every journaled entry (at once for an empty journal): from here on it is live. */
  onReplayed: (() => void) | undefined;

  constructor(
    private readonly harness: Harness,
    replay: readonly JournalEntry[],
    private readonly onJournal?: (entry: JournalEntry) => void | Promise<void>,
  ) {
    this.replay = replay;
    for (const entry of replay) {
      let chain = this.recorded.get(entry.chain);
      if (!chain) this.recorded.set(entry.chain, (chain = []));
      if (chain[entry.seq] === undefined) this.recordedCount++;
      chain[entry.seq] = entry;
    }
  }

  private recordedAt(chain: string, seq: number): JournalEntry | undefined {
    return this.recorded.get(chain)?.[seq];
  }

  /**
   * Takes the next sequence number of `chain` for `request`, with the journaled answer when
   * the journal holds one; throws DeterminismViolation when it holds another request there,
   * naming the step, the section that asks (when given) and both effects in words.
   */
  claim(chain: string, request: EffectRequest, section?: string | null): { seq: number; answer?: EffectAnswer } {
    const seq = (this.nextSeq.get(chain) ?? 0) + 1;
    this.nextSeq.set(chain, seq);
    const recorded = this.recordedAt(chain, seq);
    const problem = this.meter?.store(request);
    if (problem !== undefined) return { seq, answer: failed('limit', problem) };
    if (!recorded) return { seq };
    const kept = journaled(request);
    if (!sameJson(recorded.request, kept)) {
      this.divergedAt ??= recorded;
      const where = section === undefined ? '' : `, ${sectionWords(section)}`;
      throw new DeterminismViolation(
        `the run diverged from its journal at effect ${seq} of chain ${chain}${where}: ${differenceWords(recorded.request, request)}`,
      );
    }
    this.took(recorded);
    return { seq, answer: recorded.answer };
  }

  /**
   * Performs a claimed effect through the Harness and journals its answer (unless the run has
   * ended). An answer of kind `limit` (a tool output past its cap) ends the run with `Limit`
   * and is not journaled: the run stops there, and its journal never holds what passed a cap.
   */
  async perform(chain: string, seq: number, request: EffectRequest, section: string | null, runId: string): Promise<EffectAnswer> {
    const context: EffectContext = { runId, chain, seq, section };
    const answer = await this.harness.perform(request, context);
    if (!answer.ok && answer.error.kind === 'limit') this.meter?.exceed(answer.error.message);
    else if (!this.closed) await this.append({ chain, seq, request: journaled(request), answer });
    return answer;
  }

  /** The chains the journal says scheduler step `step` released, consumed; undefined when it has no record of it. */
  takeStep(step: number): string[] | undefined {
    const recorded = this.recordedAt(SCHEDULER_CHAIN, step);
    if (!recorded) return undefined;
    this.took(recorded);
    return recorded.answer.ok ? (recorded.answer.value as string[]) : [];
  }

  /** Whether the journal holds answers for the next `count` effects of `chain`. */
  holds(chain: string, count: number): boolean {
    const next = (this.nextSeq.get(chain) ?? 0) + 1;
    const recorded = this.recorded.get(chain);
    if (!recorded) return count <= 0;
    for (let seq = next; seq < next + count; seq++) if (recorded[seq] === undefined) return false;
    return true;
  }

  /** Whether the journal holds a record of scheduler step `step` (without taking it). */
  hasStep(step: number): boolean {
    return this.recordedAt(SCHEDULER_CHAIN, step) !== undefined;
  }

  /** Journals the chains scheduler step `step` released. */
  async recordStep(step: number, chains: string[]): Promise<void> {
    await this.append({ chain: SCHEDULER_CHAIN, seq: step, request: { op: 'scheduler.step' }, answer: { ok: true, value: chains } });
  }

  /** True while journaled entries remain that the run has not reached. */
  get replaying(): boolean {
    return this.unconsumed() > 0;
  }

  /** Journaled effects the run never asked for (a replay that ended early). */
  unconsumed(): number {
    return this.recordedCount - this.replayedCount;
  }

  /** Tells onReplayed now when the journal was empty (a run's start calls it). */
  begin(): void {
    if (this.recordedCount === 0) this.onReplayed?.();
  }

  /**
   * The first journaled entry, in journal order, that the run never took, in words: which
   * effect of which chain, and what it was (with its section, for a tool call). Undefined
   * when the run took them all.
   */
  firstUnreached(): string | undefined {
    const entry = this.firstUnreachedEntry();
    if (!entry) return undefined;
    const request = entry.request;
    const section = request.op === 'tool.call' ? `, ${sectionWords(request.origin?.section)}` : '';
    const step = entry.chain === SCHEDULER_CHAIN ? `scheduler step ${entry.seq}` : `effect ${entry.seq} of chain ${entry.chain}`;
    return `${step}${section}: ${effectWords(request)}`;
  }

  /** The first journaled entry, in journal order, that the run never took; undefined when it took them all. */
  firstUnreachedEntry(): JournalEntry | undefined {
    if (this.unconsumed() === 0) return undefined;
    const taken = new Set(this.entries);
    return this.replay.find((candidate) => !taken.has(candidate));
  }

  /** Journals nothing more: answers that land after the run ended are dropped. */
  close(): void {
    this.closed = true;
  }

  /** The journal as it stands: replayed entries, then new ones. */
  journal(): JournalEntry[] {
    return this.entries.slice();
  }

  private took(entry: JournalEntry): void {
    this.replayedCount++;
    this.entries.push(entry);
    this.meter?.journal();
    if (this.replayedCount === this.recordedCount) this.onReplayed?.();
  }

  private async append(entry: JournalEntry): Promise<void> {
    // Past a cap the run is ending with Limit: the entry is not kept.
    if (this.meter && !this.meter.journal(entry)) return;
    this.entries.push(entry);
    await this.onJournal?.(entry);
  }
}
