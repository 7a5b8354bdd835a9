/**
 * The manifest of runvil/user-input: one trusted tool that asks the operator, and the
 * prelude that wraps it as `input.ask()`.
 */
import type { PackManifest } from '../../src/host/pack.ts';
import { USER_INPUT_PRELUDE } from './prelude.ts';

/** The manifest of runvil/user-input. */
export const USER_INPUT_MANIFEST: PackManifest = {
  fqName: 'runvil/user-input',
  description: 'Ask the operator and read the answer',
  tools: [
    {
      id: 'user-input/ask',
      description: 'Ask the operator a question and wait for the answer.',
      parameters: {
        type: 'object',
        properties: {
          question: { type: 'string', description: 'What to ask the operator; leave it out to wait for their next message.' },
        },
      },
      output: 'plain',
      trusted: true,
    },
  ],
  prelude: USER_INPUT_PRELUDE,
};
