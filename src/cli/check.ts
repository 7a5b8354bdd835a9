/**
 * `runvil check PROMPT.md...`: parses every file and compiles its Lua, printing every error
 * as `file:line:column: error[Kind]: message` and `ok: file` for each good file.
 */
import { parsePrompt } from '../prompt/index.ts';
import { UsageError, type CheckCommand } from './args.ts';
import type { CliIo } from './io.ts';
import { luaSyntaxErrors } from './lua-syntax.ts';
import { cliPlatform } from './platform.ts';
import { formatError, formatUsageError, readUserFile } from './prompt-file.ts';

/** Runs `runvil check`; answers 0 when every file is good, 1 on any error, 2 when a file is missing. */
export async function checkCommand(command: CheckCommand, io: CliIo): Promise<number> {
  let status = 0;
  for (const file of command.files) {
    let text: string;
    try {
      text = await readUserFile(file, 'prompt file');
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      io.err(`${formatUsageError(error)}\n`);
      status = 2;
      continue;
    }
    const parsed = parsePrompt(text, file);
    const errors = parsed.ok ? await luaSyntaxErrors(await cliPlatform(), parsed.prompt) : parsed.errors;
    for (const error of errors) io.err(`${formatError(error)}\n`);
    if (errors.length > 0) status = Math.max(status, 1);
    else io.out(`ok: ${file}\n`);
  }
  return status;
}
