/**
 * The operator: the human a run can ask. A terminal, a chat integration, or a fixture.
 */

/** The answer to an ask: the operator's text, or a model-safe failure. */
export type OperatorAnswer = { ok: true; text: string } | { ok: false; message: string };

/** Where asks go. `context` is what the run has said so far that the operator needs. */
export interface Operator {
  ask(context: { question?: string; transcript?: string }): Promise<OperatorAnswer>;
}

/** The model-safe message of an ask nobody can answer. */
export const OPERATOR_WINDOW_CLOSED = "the operator's window closed";

/** An operator that answers from a list, then fails every further ask. */
export class ScriptedOperator implements Operator {
  private next = 0;
  constructor(private readonly answers: readonly string[]) {}

  async ask(): Promise<OperatorAnswer> {
    const answer = this.answers[this.next++];
    return answer === undefined ? { ok: false, message: OPERATOR_WINDOW_CLOSED } : { ok: true, text: answer };
  }
}
