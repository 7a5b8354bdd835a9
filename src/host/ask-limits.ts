/**
 * The caps on an operator ask: what one ask may carry. An ask is stored with its run,
 * written to the index behind `GET /asks`, shown in the console and sent in every
 * `ask.created` notification, so its size is bounded before any of that happens (a 2 MB
 * question once went into all of them). runvil/user-input checks its arguments against these
 * and says which one is wrong; an MCP server's elicitation is checked as it becomes an ask;
 * the Worker's operator refuses a new ask past them whoever made it.
 */
import type { AskContext } from './operator.ts';

/** The longest question an ask takes, in characters: a page of text. */
export const MAX_QUESTION_CHARS = 8_000;

/** The most choices an ask offers. */
export const MAX_CHOICES = 25;

/** The longest choice, in characters: a button's label. */
export const MAX_CHOICE_CHARS = 200;

// A form's caps (ask-form.ts): a form is stored, indexed and notified with its ask.

/** The most fields a form has. */
export const MAX_FORM_FIELDS = 50;
/** The longest field name, in characters. */
export const MAX_FIELD_NAME_CHARS = 64;
/** The longest title of a field, in characters: a label (an option's is a choice's, MAX_CHOICE_CHARS). */
export const MAX_FIELD_TITLE_CHARS = 200;
/** The longest description of a field, in characters. */
export const MAX_FIELD_DESCRIPTION_CHARS = 2_000;
/** The most options an enum offers. */
export const MAX_FORM_OPTIONS = 100;
/** The longest text a field takes, in characters, whatever its `maxLength`: a page, as a question. */
export const MAX_FORM_TEXT_CHARS = 8_000;
/** The longest form, as JSON text in characters. */
export const MAX_FORM_CHARS = 32_000;

/** The longest timeout an ask takes: 30 days, in seconds. */
export const MAX_ASK_TIMEOUT_SECONDS = 2_592_000;

/** Characters as a person counts them (code points), so that an emoji is one. */
export const charCount = (text: string): number => [...text].length;

/** Why a question cannot be asked, or null. */
export function questionProblem(question: string): string | null {
  const chars = charCount(question);
  return chars > MAX_QUESTION_CHARS ? `the question is ${chars} characters long; an ask's question takes at most ${MAX_QUESTION_CHARS}` : null;
}

/** Why a list of choices cannot be offered, or null: 1 to MAX_CHOICES distinct texts of 1 to MAX_CHOICE_CHARS characters. */
export function choicesProblem(choices: readonly unknown[]): string | null {
  if (choices.length === 0) return 'an ask offers at least one choice';
  if (choices.length > MAX_CHOICES) return `${choices.length} choices were given; an ask offers at most ${MAX_CHOICES}`;
  for (const [index, choice] of choices.entries()) {
    if (typeof choice !== 'string') return `choice ${index + 1} is not text`;
    const chars = charCount(choice);
    if (chars === 0) return `choice ${index + 1} is empty`;
    if (chars > MAX_CHOICE_CHARS) return `choice ${index + 1} is ${chars} characters long; a choice takes at most ${MAX_CHOICE_CHARS}`;
  }
  if (new Set(choices).size !== choices.length) return 'a choice is given twice; each choice is an answer of its own';
  return null;
}

/** Why a timeout cannot be given, or null: seconds above 0 and at most MAX_ASK_TIMEOUT_SECONDS. */
export function timeoutProblem(timeout: number): string | null {
  return Number.isFinite(timeout) && timeout > 0 && timeout <= MAX_ASK_TIMEOUT_SECONDS
    ? null
    : `the timeout is ${timeout} seconds; an ask's timeout is above 0 and at most ${MAX_ASK_TIMEOUT_SECONDS} (30 days)`;
}

/** Why an ask cannot be put to the operator, or null. */
export function askProblem(ask: Pick<AskContext, 'question' | 'choices' | 'timeout'>): string | null {
  return (
    (ask.question !== undefined ? questionProblem(ask.question) : null) ??
    (ask.choices !== undefined ? choicesProblem(ask.choices) : null) ??
    (ask.timeout !== undefined ? timeoutProblem(ask.timeout) : null)
  );
}
