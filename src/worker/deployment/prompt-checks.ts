/**
 * What an upload checks beyond parsing: that the prompt's Lua compiles (compiled, not run,
 * on the isolate's Lua platform: one VM per check, closed after), and which of its Packs
 * the deployment does not have (a warning: Packs may be configured later).
 */
import { missingPacks, type MissingPack } from '../../config/missing-packs.ts';
import { luaSyntaxErrors } from '../../engine/lua/compile-check.ts';
import type { Prompt } from '../../prompt/types.ts';
import { deploymentConfig } from './deployment.ts';
import { ApiError } from '../http/http-error.ts';
import { isolatePlatform } from '../workerd-lua/lua-platform.ts';

/** Refuses with 400 a prompt whose Lua does not compile, naming the first error's `file:line:column` and Lua's message. */
export async function checkPromptCompiles(prompt: Prompt, source: string): Promise<void> {
  const errors = await luaSyntaxErrors(await isolatePlatform(), prompt, source);
  const first = errors[0];
  if (first === undefined) return;
  const where = [first.file, first.line, first.column].filter((part) => part !== undefined).join(':');
  throw new ApiError(400, `the prompt's Lua does not compile: ${where}: ${first.message}; fix it and upload the prompt again`, {
    file: first.file,
    line: first.line ?? null,
    column: first.column ?? null,
    errors: errors.map((error) => ({ kind: error.kind, message: error.message, line: error.line ?? null, column: error.column ?? null })),
  });
}

/** The upload's warnings: each Pack the prompt declares that the deployment does not have. */
export function packWarnings(prompt: Prompt): MissingPack[] {
  return missingPacks(prompt.frontmatter.uses, deploymentConfig());
}
