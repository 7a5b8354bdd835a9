/**
 * runvil/user-input: `user-input/ask` hands the question to the run's operator and answers
 * the operator's text, trusted; a failed ask answers the operator's model-safe message. An
 * ask with a `form` (ask-form.ts) answers the operator's object as its JSON text.
 */
import type { Pack } from '../../src/host/pack.ts';
import type { Json } from '../../src/json/json.ts';
import { charCount, choicesProblem, questionProblem } from '../../src/host/ask-limits.ts';
import { readForm, type AskForm } from '../../src/host/ask-form.ts';
import { MAX_ASK_TIMEOUT_SECONDS, MAX_CHOICE_CHARS, MAX_CHOICES, MAX_QUESTION_CHARS, USER_INPUT_MANIFEST } from './manifest.ts';

/** user-input/ask's failure when the question is given but is not a string. */
export const QUESTION_NOT_TEXT = 'user-input_ask: question must be a string';

/** user-input/ask's failure when the question is longer than MAX_QUESTION_CHARS. */
export const questionTooLong = (chars: number): string =>
  `user-input_ask: question is ${chars} characters long; an ask's question takes at most ${MAX_QUESTION_CHARS}`;

/** user-input/ask's failure when `choices` is not a list of distinct non-empty strings. */
export const CHOICES_NOT_TEXTS = `user-input_ask: choices must be a list of 1 to ${MAX_CHOICES} distinct strings of 1 to ${MAX_CHOICE_CHARS} characters`;

/** user-input/ask's failure when `timeout` is not a number of seconds. */
export const TIMEOUT_NOT_SECONDS = `user-input_ask: timeout must be a number of seconds above 0 and at most ${MAX_ASK_TIMEOUT_SECONDS}`;

/** user-input/ask's failure when both `choices` and `form` are given. */
export const CHOICES_AND_FORM = 'user-input_ask: choices and form do not go together: a form offers choices as an enum field';

/** user-input/ask's failure when `form` is not MCP's elicitation schema: where and what is wrong (ask-form.ts). */
export const formNotASchema = (problem: string): string => `user-input_ask: ${problem}`;

/** True for a list of 1 to MAX_CHOICES distinct strings of 1 to MAX_CHOICE_CHARS characters. */
const validChoices = (value: Json): boolean => Array.isArray(value) && choicesProblem(value) === null;

/** Builds runvil/user-input. */
export function userInputPack(): Pack {
  return {
    manifest: USER_INPUT_MANIFEST,
    async call(tool, args, context) {
      if (tool !== 'user-input/ask') return { ok: false, message: `${tool}: runvil/user-input has no such tool` };
      const question = args.question;
      if (question !== undefined && question !== null && typeof question !== 'string') {
        return { ok: false, message: QUESTION_NOT_TEXT };
      }
      // Refused before the operator sees it: an ask is stored, indexed and notified whole.
      if (typeof question === 'string' && questionProblem(question) !== null) return { ok: false, message: questionTooLong(charCount(question)) };
      const choices = args.choices;
      if (choices !== undefined && choices !== null && !validChoices(choices)) return { ok: false, message: CHOICES_NOT_TEXTS };
      const rawForm = args.form;
      let form: AskForm | undefined;
      if (rawForm !== undefined && rawForm !== null) {
        if (choices !== undefined && choices !== null) return { ok: false, message: CHOICES_AND_FORM };
        const read = readForm(rawForm);
        if (!read.ok) return { ok: false, message: formNotASchema(read.message) };
        form = read.form;
      }
      const timeout = args.timeout;
      if (timeout !== undefined && timeout !== null && !(typeof timeout === 'number' && timeout > 0 && timeout <= MAX_ASK_TIMEOUT_SECONDS)) {
        return { ok: false, message: TIMEOUT_NOT_SECONDS };
      }
      const asked = {
        ...(typeof question === 'string' ? { question } : {}),
        ...(context.effect ? { effect: context.effect } : {}),
        ...(Array.isArray(choices) ? { choices: choices as string[] } : {}),
        ...(form ? { form } : {}),
        ...(typeof timeout === 'number' ? { timeout } : {}),
      };
      const answer = await context.operator.ask(asked);
      return answer.ok ? { ok: true, output: answer.text } : { ok: false, message: answer.message };
    },
  };
}

export { USER_INPUT_MANIFEST } from './manifest.ts';
export { USER_INPUT_PRELUDE } from './prelude.ts';
