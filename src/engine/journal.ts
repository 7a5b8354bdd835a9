/**
 * The journal: every effect's request and answer, keyed by (chain, sequence number).
 * Replaying a run over its journal reproduces it without calling the Harness again.
 */
import type { Json } from '../prompt/types.ts';
import type { EffectAnswer, EffectContext, EffectRequest, Harness } from './effects.ts';

/** One journaled effect. */
export interface JournalEntry {
  chain: string;
  seq: number;
  request: EffectRequest;
  answer: EffectAnswer;
}

/** Raised inside the Engine when a replay asks for something other than what the journal holds. */
export class DeterminismViolation extends Error {}

/** JSON text with object keys sorted, so two equal requests compare equal as text. */
export function canonicalJson(value: Json | EffectRequest | undefined): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) sorted[key] = (v as Record<string, unknown>)[key];
      return sorted;
    }
    return v;
  });
}

const keyOf = (chain: string, seq: number) => `${chain}#${seq}`;

/**
 * A 64-bit FNV-1a digest of a text, in hex: a fingerprint for noticing a replay that asks for
 * something else, not a defence against anyone forging one.
 */
export function digestText(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193) ^ (a >>> 7);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/**
 * Performs effects for one run: answers from the journal while it lasts (checking that the
 * run asks for the same thing), then from the Harness, journaling each new answer before
 * handing it back.
 */
export class EffectRunner {
  private readonly recorded = new Map<string, JournalEntry>();
  private readonly nextSeq = new Map<string, number>();
  private readonly entries: JournalEntry[] = [];
  private replayedCount = 0;

  constructor(
    private readonly harness: Harness,
    replay: readonly JournalEntry[],
    private readonly onJournal?: (entry: JournalEntry) => void | Promise<void>,
  ) {
    for (const entry of replay) this.recorded.set(keyOf(entry.chain, entry.seq), entry);
  }

  /** Performs one effect of `chain`; throws DeterminismViolation on a divergent replay. */
  async perform(chain: string, request: EffectRequest, section: string | null, runId: string): Promise<EffectAnswer> {
    const seq = (this.nextSeq.get(chain) ?? 0) + 1;
    this.nextSeq.set(chain, seq);
    const recorded = this.recorded.get(keyOf(chain, seq));
    if (recorded) {
      if (canonicalJson(recorded.request) !== canonicalJson(request)) {
        throw new DeterminismViolation(
          `the run diverged from its journal at effect ${seq} of chain ${chain}: the journal holds ${describe(recorded.request)}, but the run asked for ${describe(request)}`,
        );
      }
      this.replayedCount++;
      this.entries.push(recorded);
      return recorded.answer;
    }
    const context: EffectContext = { runId, chain, seq, section };
    const answer = await this.harness.perform(request, context);
    const entry: JournalEntry = { chain, seq, request, answer };
    this.entries.push(entry);
    await this.onJournal?.(entry);
    return answer;
  }

  /** Journaled effects the run never asked for (a replay that ended early). */
  unconsumed(): number {
    return this.recorded.size - this.replayedCount;
  }

  /** The journal as it stands: replayed entries, then new ones. */
  journal(): JournalEntry[] {
    return this.entries.slice();
  }
}

function describe(request: EffectRequest): string {
  const text = canonicalJson(request);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
