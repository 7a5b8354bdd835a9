/**
 * The run object's operator, the ask face of the wait ledger (src/host/waits/wait-ledger.ts): an ask
 * becomes a stored pending ask (its answer token is the Worker's to derive, ask-token.ts),
 * and the chain that asked waits on it; the ledger ends the wait (an answer, the deadline,
 * the task's cancellation) and `wake` hands the end over.
 *
 * An ask's id is its effect's (chain, seq), such as `0-7`, or `0.0-1` for the first effect
 * of task `0.0` and `0.f0.2-1` for a fanout arm's: the same on every replay. So a replay that
 * reaches an ask already answered (the object was evicted while it waited) gets the stored
 * answer at once, and one that reaches a pending ask waits on it again, under the same id (so the same token).
 * The answer is journaled only when the ask's tool call completes, so a crash repeats at
 * most the ask itself, never an effect after it.
 *
 * Several chains of a run can wait on asks at once, each answered on its own, in any order.
 */
import { askProblem } from '../../host/ask-limits.ts';
import { formJson, readForm } from '../../host/ask-form.ts';
import { OPERATOR_WINDOW_CLOSED, type AskContext, type Operator, type OperatorAnswer } from '../../host/operator.ts';
import type { RunState } from '../run-object/run-state.ts';
import { askWait, StoredAsks } from './stored-waits.ts';
import { WAIT_KINDS, type AskAnswer } from '../../host/waits/wait-kinds.ts';
import { endOf, WaitLedger, type WaitEnd } from '../../host/waits/wait-ledger.ts';
import { Waiters } from '../../host/waits/waiters.ts';

export { chainOfAsk } from './stored-waits.ts';

/** The ask id of an effect (and of its `part`-th ask, when it asks more than once). */
export const askIdOf = (effect: { chain: string; seq: number }, part = 0): string => `${effect.chain}-${effect.seq}${part > 0 ? `.${part}` : ''}`;

/** Why an ask's form cannot be stored and shown, or null: whoever made the ask, its form is MCP's elicitation schema within the caps (ask-form.ts). */
function formProblem(context: AskContext): string | null {
  if (context.form === undefined) return null;
  if (context.choices !== undefined) return 'an ask offers choices or a form, not both';
  const read = readForm(context.form);
  return read.ok ? null : `the ask's form cannot be put to the operator: ${read.message}`;
}

/** What the asking chain gets from an ask's end: the answer, or the closed window (expired or closed alike: the model may ask again). */
const operatorAnswer = (end: WaitEnd<AskAnswer>): OperatorAnswer =>
  end.kind === 'done' ? { ok: true, text: end.result.text } : { ok: false, message: OPERATOR_WINDOW_CLOSED };

/** Operator asks of one live run. */
export class AskBroker implements Operator {
  readonly ledger: WaitLedger<AskAnswer>;
  private readonly waiters: Waiters<AskAnswer>;
  private fallbackSeq = 0;

  constructor(
    private readonly state: RunState,
    /** Called when the set of waiting asks changes (the run may have become suspended). */
    changed: () => void,
    private readonly clock: () => number = Date.now,
  ) {
    this.ledger = new WaitLedger(new StoredAsks(state), WAIT_KINDS.ask);
    this.waiters = new Waiters(this.ledger, changed);
  }

  async ask(context: AskContext): Promise<OperatorAnswer> {
    const askId = context.effect ? askIdOf(context.effect, context.part) : `ask-${++this.fallbackSeq}`;
    const record = this.state.ask(askId);
    const ended = record && endOf(askWait(record));
    if (ended) return operatorAnswer(ended);
    // Whoever makes it, an ask past the caps is never stored, indexed or notified (ask-limits.ts).
    const problem = record ? null : (askProblem(context) ?? formProblem(context));
    if (problem !== null) return { ok: false, message: problem };
    if (!record) {
      const question = context.question ?? null;
      const now = this.clock();
      const choices = context.choices ?? null;
      const form = context.form ?? null;
      const refusals = form !== null && context.refusals ? { refusals: [...context.refusals] } : {};
      const expiresAt = context.timeout !== undefined ? new Date(now + context.timeout * 1000).toISOString() : null;
      this.state.atomically(() => {
        const order = this.state.asks().length + 1;
        this.state.putAsk({
          ask_id: askId,
          question,
          asked_at: new Date(now).toISOString(),
          state: 'pending',
          order,
          choices,
          form,
          ...refusals,
          expires_at: expiresAt,
        });
        // The form only when there is one: the stream's asks without one read as they always have.
        const event = { type: 'ask_pending', task: context.effect?.chain ?? '0', ask_id: askId, question, choices, expires_at: expiresAt };
        this.state.appendEvent(form === null ? event : { ...event, form: formJson(form) });
      });
    }
    return operatorAnswer(await this.waiters.wait(askId));
  }

  /** Asks this run waits on now. */
  get waitingCount(): number {
    return this.waiters.count;
  }

  /** Hands the stored end of ask `askId` (answered, expired or closed) to the chain that waits on it, if one does. */
  wake(askId: string): void {
    this.waiters.wake(askId);
  }

  /** Closes the pending asks of a cancelled task and of the tasks it started; their waits end with the closed window. */
  closeAsksOf(task: string): void {
    for (const askId of this.ledger.closeWithin(task, this.clock())) this.waiters.wake(askId);
  }
}
