/**
 * runvil/user-input: `user-input/ask` hands the question to the run's operator and answers
 * the operator's text, trusted; a failed ask answers the operator's model-safe message.
 */
import type { Pack } from '../../src/host/pack.ts';
import { USER_INPUT_MANIFEST } from './manifest.ts';

/** user-input/ask's failure when the question is given but is not a string. */
export const QUESTION_NOT_TEXT = 'user-input_ask: question must be a string';

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
      const asked = { ...(typeof question === 'string' ? { question } : {}), ...(context.effect ? { effect: context.effect } : {}) };
      const answer = await context.operator.ask(asked);
      return answer.ok ? { ok: true, output: answer.text } : { ok: false, message: answer.message };
    },
  };
}

export { USER_INPUT_MANIFEST } from './manifest.ts';
export { USER_INPUT_PRELUDE } from './prelude.ts';
