/**
 * The run object's operator: an ask becomes a stored pending ask with its own answer
 * token, and the run waits on it; an answer resolves the wait.
 *
 * An ask's id is its effect's (chain, seq), such as `0-7`, the same on every replay. So a
 * replay that reaches an ask already answered (the object was evicted while it waited) gets
 * the stored answer at once, and one that reaches a pending ask waits on it again, with the
 * same token. The answer is journaled only when the ask's tool call completes, so a crash
 * repeats at most the ask itself, never an effect after it.
 */
import { OPERATOR_WINDOW_CLOSED, type AskContext, type Operator, type OperatorAnswer } from '../host/operator.ts';
import { randomToken } from './constant-time.ts';
import type { RunState } from './run-state.ts';

/** The ask id of an effect. */
export const askIdOf = (effect: { chain: string; seq: number }): string => `${effect.chain}-${effect.seq}`;

/** Operator asks of one live run. */
export class AskBroker implements Operator {
  private readonly waiting = new Map<string, (answer: OperatorAnswer) => void>();
  private fallbackSeq = 0;

  constructor(
    private readonly state: RunState,
    /** Called when the set of waiting asks changes (the run may have become suspended). */
    private readonly changed: () => void,
    private readonly clock: () => number = Date.now,
  ) {}

  async ask(context: AskContext): Promise<OperatorAnswer> {
    const askId = context.effect ? askIdOf(context.effect) : `ask-${++this.fallbackSeq}`;
    const record = this.state.ask(askId);
    if (record?.state === 'answered') return { ok: true, text: record.answer ?? '' };
    if (record?.state === 'closed') return { ok: false, message: OPERATOR_WINDOW_CLOSED };
    const answer = new Promise<OperatorAnswer>((resolve) => this.waiting.set(askId, resolve));
    if (!record) {
      const question = context.question ?? null;
      this.state.atomically(() => {
        this.state.putAsk({ ask_id: askId, question, asked_at: new Date(this.clock()).toISOString(), token: randomToken(), state: 'pending' });
        this.state.appendEvent({ type: 'ask_pending', task: context.effect?.chain ?? '0', ask_id: askId, question });
      });
    }
    this.changed();
    return answer;
  }

  /** Asks this run waits on now. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** Hands an answer to the run if it waits on that ask; true when it did. */
  deliver(askId: string, answer: OperatorAnswer): boolean {
    const resolve = this.waiting.get(askId);
    if (!resolve) return false;
    this.waiting.delete(askId);
    resolve(answer);
    return true;
  }
}
