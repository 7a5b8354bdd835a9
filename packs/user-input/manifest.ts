/**
 * The manifest of runvil/user-input: one trusted tool that asks the operator, and the
 * prelude that wraps it as `input.ask()`.
 */
import type { PackManifest } from '../../src/host/pack.ts';
import { MAX_ASK_TIMEOUT_SECONDS, MAX_CHOICE_CHARS, MAX_CHOICES, MAX_QUESTION_CHARS } from '../../src/host/ask-limits.ts';
import { USER_INPUT_PRELUDE } from './prelude.ts';

// The caps of every ask (src/host/ask-limits.ts), written into the schema the model reads.
export { MAX_ASK_TIMEOUT_SECONDS, MAX_CHOICE_CHARS, MAX_CHOICES, MAX_QUESTION_CHARS };

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
          question: {
            type: 'string',
            maxLength: MAX_QUESTION_CHARS,
            description: 'What to ask the operator; leave it out to wait for their next message.',
          },
          choices: {
            type: 'array',
            items: { type: 'string', minLength: 1, maxLength: MAX_CHOICE_CHARS },
            minItems: 1,
            maxItems: MAX_CHOICES,
            description: 'The answers the operator may give (shown as buttons); any other answer is refused. Leave it out for free text.',
          },
          form: {
            type: 'object',
            description:
              "A form for the operator to fill, exactly MCP's elicitation requestedSchema: { type: 'object', properties: { name: field }, required: [...] }, each field a string (format email, uri, date or date-time; minLength, maxLength), number or integer (minimum, maximum), boolean, a single-select (enum, oneOf of const and title, or enum with enumNames) or a multi-select (type array, items.enum or items.anyOf; minItems, maxItems), with title, description and default. The answer is then the filled object as JSON text (json.decode it). Not with choices.",
          },
          timeout: {
            type: 'number',
            exclusiveMinimum: 0,
            maximum: MAX_ASK_TIMEOUT_SECONDS,
            description:
              'Seconds the operator has to answer; then the call fails with "the operator\'s window closed". Leave it out to wait as long as the run may.',
          },
        },
      },
      output: 'plain',
      trusted: true,
    },
  ],
  prelude: USER_INPUT_PRELUDE,
};
