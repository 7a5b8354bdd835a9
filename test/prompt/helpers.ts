/** Builders shared by the prompt parser's tests. */
import { parsePrompt } from '../../src/prompt/index.ts';
import type { Prompt, PromptError } from '../../src/prompt/index.ts';

/** The frontmatter lines every valid test prompt starts with (file lines 2-4). */
export const BASE_FRONTMATTER = ['name: test-prompt', 'description: A prompt under test.', 'runvil: 0'];

/** A prompt file: `---`, the frontmatter lines, `---`, then the body lines. */
export function promptText(frontmatter: readonly string[], body: readonly string[] = ['# Test', '', '## Go', 'hi']): string {
  return ['---', ...frontmatter, '---', ...body].join('\n') + '\n';
}

/** A prompt with the base frontmatter and the given body lines (the body starts on line 6). */
export function withBody(body: readonly string[]): string {
  return promptText(BASE_FRONTMATTER, body);
}

/** Parses text that must be valid and returns the prompt. */
export function parseOk(text: string): Prompt {
  const result = parsePrompt(text, 'test.md');
  if (!result.ok) throw new Error(`expected a valid prompt, got:\n${result.errors.map((e) => e.message).join('\n')}`);
  return result.prompt;
}

/** Parses text that must be invalid and returns every error. */
export function parseErrors(text: string): PromptError[] {
  const result = parsePrompt(text, 'test.md');
  if (result.ok) throw new Error('expected parse errors, got a valid prompt');
  return result.errors;
}

/** The messages of the errors for a prompt with the base frontmatter plus extra lines. */
export function frontmatterErrors(extra: readonly string[]): PromptError[] {
  return parseErrors(promptText([...BASE_FRONTMATTER, ...extra]));
}
