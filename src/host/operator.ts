/**
 * The operator: the human a run can ask. A terminal, a chat integration, or a fixture.
 */

/** The answer to an ask: the operator's text, or a model-safe failure. */
export type OperatorAnswer = { ok: true; text: string } | { ok: false; message: string };

/** What an ask carries: the question, what the run has said, and which effect asks. */
export interface AskContext {
  question?: string;
  transcript?: string;
  /**
   * The effect that asks, as (chain, sequence number): the same on every replay of the run,
   * so a Host that persists asks can find the answer a replayed ask already has.
   */
  effect?: { chain: string; seq: number };
  /**
   * Which ask of the effect this is, when one effect asks more than once (an MCP tool's
   * elicitation of several fields): 0, the default, is the effect's own ask id; N adds `.N`.
   */
  part?: number;
  /** The answers the ask takes; any other is refused. Absent: any text. */
  choices?: string[];
  /** Seconds the operator has to answer; then the ask closes and fails with OPERATOR_WINDOW_CLOSED. */
  timeout?: number;
}

/** Where asks go. */
export interface Operator {
  ask(context: AskContext): Promise<OperatorAnswer>;
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
