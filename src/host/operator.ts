/**
 * The operator: the human a run can ask. A terminal, a chat integration, or a fixture.
 */
import type { Json } from '../json/json.ts';
import { fitAnswer } from './ask-answer.ts';
import type { AskForm } from './ask-form.ts';

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
  /** The form the answer fills (ask-form.ts): the answer is then a JSON object, and its text the object's JSON. */
  form?: AskForm;
  /**
   * Words a form ask also takes in place of its form's object, which refuse it (an MCP
   * server's elicitation: `decline`, `cancel`): the answer's text is then the word itself.
   */
  refusals?: string[];
  /** Seconds the operator has to answer; then the ask closes and fails with OPERATOR_WINDOW_CLOSED. */
  timeout?: number;
}

/** Where asks go. */
export interface Operator {
  ask(context: AskContext): Promise<OperatorAnswer>;
}

/** The model-safe message of an ask nobody can answer. */
export const OPERATOR_WINDOW_CLOSED = "the operator's window closed";

/** An answer of a list refused because it does not fit its ask: none of its choices, or not its form's object. */
export interface RefusedAnswer {
  /** Its place in the list, from 0. */
  index: number;
  /** Why, naming the ask and its choices (ask-choices.ts) or the field of its form (ask-form.ts). */
  message: string;
}

/**
 * An operator that answers from a list, then fails every further ask. An answer outside its
 * ask's choices, or that does not fit its form, is refused, as the API refuses it: the ask
 * fails with why, and `refused` keeps it for whoever wrote the list (a test file names its
 * line). An answer to a form ask is an object (or its JSON text).
 */
export class ScriptedOperator implements Operator {
  private next = 0;
  /** The answers refused so far, in the order they were asked for. */
  readonly refused: RefusedAnswer[] = [];
  constructor(private readonly answers: readonly Json[]) {}

  async ask(context: AskContext = {}): Promise<OperatorAnswer> {
    const index = this.next++;
    const answer = this.answers[index];
    if (answer === undefined) return { ok: false, message: OPERATOR_WINDOW_CLOSED };
    const fitted = fitAnswer(
      { id: askIdOf(context), question: context.question, choices: context.choices, form: context.form, refusals: context.refusals },
      answer,
    );
    if (!fitted.ok) {
      this.refused.push({ index, message: fitted.message });
      return { ok: false, message: fitted.message };
    }
    return { ok: true, text: fitted.text };
  }
}

/** An ask's id as the API names it (`<chain>-<seq>`, `.N` for a further ask of one effect). */
function askIdOf(context: AskContext): string {
  if (!context.effect) return '(with no id)';
  return `${context.effect.chain}-${context.effect.seq}${context.part ? `.${context.part}` : ''}`;
}
