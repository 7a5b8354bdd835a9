/**
 * Whether an answer fits its ask, on the paths that give an answer outside the live route:
 * a fork's `answers` (fork.ts), a test file's `answers:` and the terminal (operator.ts's
 * ScriptedOperator, the CLI), recorded asks (recording.ts). A free-text ask takes a text, one
 * of its choices when it offers some (ask-choices.ts); a form ask takes a JSON object that
 * fits its form (ask-form.ts), or that object's JSON text, and Lua gets its canonical JSON
 * text, as from the live route.
 */
import type { Json } from '../json/json.ts';
import { notAChoice, takesAnswer } from './ask-choices.ts';
import { checkFormAnswer, formAnswerText, type AskForm } from './ask-form.ts';

/** What an ask takes and how a refusal names it. */
export interface AskTerms {
  /** The ask's id as the API names it, or words that place it. */
  id: string;
  question?: string | undefined;
  choices?: readonly Json[] | null | undefined;
  form?: AskForm | null | undefined;
  /** Words a form ask takes in place of its object (operator.ts's AskContext `refusals`). */
  refusals?: readonly string[] | null | undefined;
}

/** The text Lua gets for an answer, or why the ask does not take it (`field`: the form's field that does not fit). */
export type FittedAnswer = { ok: true; text: string } | { ok: false; message: string; field?: string };

/** The text `answer` gives the ask `terms` describes, or why it does not fit. */
export function fitAnswer(terms: AskTerms, answer: Json): FittedAnswer {
  const form = terms.form ?? null;
  if (form !== null) {
    if (typeof answer === 'string' && terms.refusals?.includes(answer.trim())) return { ok: true, text: answer.trim() };
    const object = typeof answer === 'string' ? parsedObject(answer) : answer;
    const checked = checkFormAnswer(form, object);
    if (checked.ok) return { ok: true, text: formAnswerText(checked.value) };
    return { ok: false, message: `the answer does not fit the form of the ask ${terms.id}${quoted(terms.question)}: ${checked.message}`, field: checked.field };
  }
  const choices = terms.choices ?? null;
  if (typeof answer !== 'string') {
    if (choices !== null) return { ok: false, message: notAChoice({ id: terms.id, question: terms.question }, answer, choices) };
    const what = Array.isArray(answer) ? 'a list' : typeof answer === 'object' && answer !== null ? 'an object' : JSON.stringify(answer);
    return { ok: false, message: `the ask ${terms.id}${quoted(terms.question)} has no form: its answer is a text, not ${what}` };
  }
  if (!takesAnswer(choices, answer)) return { ok: false, message: notAChoice({ id: terms.id, question: terms.question }, answer, choices ?? []) };
  return { ok: true, text: answer };
}

/** A text holding a JSON object, as the object (a form's answer given as text: `--answer '{"a":1}'`, a recorded output); otherwise the text. */
function parsedObject(text: string): unknown {
  if (!text.trimStart().startsWith('{')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A question as a message quotes it: its first 80 characters, in parentheses. */
function quoted(question: string | undefined): string {
  if (question === undefined) return '';
  const chars = [...question];
  return ` (${JSON.stringify(chars.length > 80 ? `${chars.slice(0, 80).join('')}…` : question)})`;
}
