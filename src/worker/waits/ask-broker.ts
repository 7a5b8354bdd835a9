/**
 * The run object's operator: an ask becomes a stored pending ask (its answer token is the
 * Worker's to derive, ask-token.ts), and the run waits on it; an answer resolves the wait.
 *
 * An ask's id is its effect's (chain, seq), such as `0-7`, or `0.0-1` for the first effect
 * of task `0.0` and `0.f0.2-1` for a fanout arm's: the same on every replay. So a replay that
 * reaches an ask already answered (the object was evicted while it waited) gets the stored
 * answer at once, and one that reaches a pending ask waits on it again, under the same id (so the same token).
 * The answer is journaled only when the ask's tool call completes, so a crash repeats at
 * most the ask itself, never an effect after it.
 *
 * Several chains of a run can wait on asks at once, each answered on its own, in any order.
 * When a task is cancelled, its pending asks close: nobody waits for their answers now.
 */
import { askProblem } from '../../host/ask-limits.ts';
import { OPERATOR_WINDOW_CLOSED, type AskContext, type Operator, type OperatorAnswer } from '../../host/operator.ts';
import type { RunState } from '../run-object/run-state.ts';

/** The ask id of an effect (and of its `part`-th ask, when it asks more than once). */
export const askIdOf = (effect: { chain: string; seq: number }, part = 0): string => `${effect.chain}-${effect.seq}${part > 0 ? `.${part}` : ''}`;

/** The chain that made the ask `askId` (chain ids hold no `-`). */
export const chainOfAsk = (askId: string): string => {
  const dash = askId.lastIndexOf('-');
  return dash < 0 ? '0' : askId.slice(0, dash);
};

/** True when the ask `askId` was made by `task` or by a task it started (chain ids hold no `-`). */
export function askedWithin(askId: string, task: string): boolean {
  const dash = askId.lastIndexOf('-');
  if (dash < 0) return false;
  const chain = askId.slice(0, dash);
  return chain === task || chain.startsWith(`${task}.`);
}

/** Closes, as expired, every pending ask of the run whose deadline is at or before `now`; answers their ids. */
export function expireAsks(state: RunState, now: number): string[] {
  const expired: string[] = [];
  for (const ask of state.asks()) {
    if (ask.state !== 'pending' || !ask.expires_at || Date.parse(ask.expires_at) > now) continue;
    state.atomically(() => {
      state.putAsk({ ...ask, state: 'closed', closed_reason: 'expired', closed_at: new Date(now).toISOString() });
      state.appendEvent({ type: 'ask_expired', task: chainOfAsk(ask.ask_id), ask_id: ask.ask_id });
    });
    expired.push(ask.ask_id);
  }
  return expired;
}

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
    const askId = context.effect ? askIdOf(context.effect, context.part) : `ask-${++this.fallbackSeq}`;
    const record = this.state.ask(askId);
    if (record?.state === 'answered') return { ok: true, text: record.answer ?? '' };
    if (record?.state === 'closed') return { ok: false, message: OPERATOR_WINDOW_CLOSED };
    // Whoever makes it, an ask past the caps is never stored, indexed or notified (ask-limits.ts).
    const problem = record ? null : askProblem(context);
    if (problem !== null) return { ok: false, message: problem };
    const answer = new Promise<OperatorAnswer>((resolve) => this.waiting.set(askId, resolve));
    if (!record) {
      const question = context.question ?? null;
      const now = this.clock();
      const choices = context.choices ?? null;
      const expiresAt = context.timeout !== undefined ? new Date(now + context.timeout * 1000).toISOString() : null;
      this.state.atomically(() => {
        const order = this.state.asks().length + 1;
        this.state.putAsk({ ask_id: askId, question, asked_at: new Date(now).toISOString(), state: 'pending', order, choices, expires_at: expiresAt });
        this.state.appendEvent({ type: 'ask_pending', task: context.effect?.chain ?? '0', ask_id: askId, question, choices, expires_at: expiresAt });
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
    this.changed();
    return true;
  }

  /** Closes the pending asks of a cancelled task and of the tasks it started; their waits end with the closed window. */
  closeAsksOf(task: string): void {
    for (const record of this.state.asks()) {
      if (record.state !== 'pending' || !askedWithin(record.ask_id, task)) continue;
      this.state.putAsk({ ...record, state: 'closed', closed_reason: 'cancelled', closed_at: new Date(this.clock()).toISOString() });
      this.deliver(record.ask_id, { ok: false, message: OPERATOR_WINDOW_CLOSED });
    }
  }
}
