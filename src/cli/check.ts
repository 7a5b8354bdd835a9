/**
 * `runvil check PROMPT.md... runvil.yaml`: parses every prompt and compiles its Lua, and
 * checks every deployment configuration (a `.yaml` file that is not a `.test.yaml`),
 * printing every error as `file:line:column: error[Kind]: message` and `ok: file` for each
 * good file. With `--config runvil.yaml`, a Pack a prompt declares that the deployment does
 * not have is an error at its `uses:` entry.
 */
import type { DeploymentConfig } from '../config/deployment-config.ts';
import { missingPacks } from '../config/missing-packs.ts';
import { parseDeploymentConfig } from '../config/parse-config.ts';
import { luaSyntaxErrors } from '../engine/lua/compile-check.ts';
import { parsePrompt } from '../prompt/index.ts';
import type { Prompt } from '../prompt/types.ts';
import { UsageError, type CheckCommand } from './args.ts';
import { checkTriggers } from './check-triggers.ts';
import { isConfigFile, loadDeploymentConfig } from './config-file.ts';
import type { CliIo } from './io.ts';
import { cliPlatform } from './platform.ts';
import { formatError, formatUsageError, readUserFile, type Placed } from './prompt-file.ts';

/** Runs `runvil check`; answers 0 when every file is good, 1 on any error, 2 when a file is missing. */
export async function checkCommand(command: CheckCommand, io: CliIo): Promise<number> {
  // With --config, each prompt's uses: is checked against that deployment's Packs (a bad file is a usage error).
  const deployment = command.config === undefined ? null : { file: command.config, config: await loadDeploymentConfig(command.config) };
  let status = 0;
  for (const file of command.files) {
    let text: string;
    try {
      text = await readUserFile(file, isConfigFile(file) ? 'configuration file' : 'prompt file');
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      io.err(`${formatUsageError(error)}\n`);
      status = 2;
      continue;
    }
    if (isConfigFile(file)) {
      const config = parseDeploymentConfig(text);
      if (config.ok) {
        const triggers = await checkTriggers(file, text, config.config, command.files, io);
        if (triggers === 0) io.out(`ok: ${file}\n`);
        status = Math.max(status, triggers);
      } else {
        for (const problem of config.problems) io.err(`${formatError({ kind: 'Config', file, ...problem })}\n`);
        status = Math.max(status, 1);
      }
      continue;
    }
    const parsed = parsePrompt(text, file);
    const errors: Placed[] = parsed.ok ? await luaSyntaxErrors(await cliPlatform(), parsed.prompt, text) : parsed.errors;
    if (parsed.ok && deployment) errors.push(...missingPackErrors(file, parsed.prompt, deployment));
    for (const error of errors) io.err(`${formatError(error)}\n`);
    if (errors.length > 0) status = Math.max(status, 1);
    else io.out(`ok: ${file}\n`);
  }
  return status;
}

/** Each Pack the prompt declares that the deployment of `--config` does not have, as an error at its `uses:` entry. */
function missingPackErrors(file: string, prompt: Prompt, deployment: { file: string; config: DeploymentConfig }): Placed[] {
  return missingPacks(prompt.frontmatter.uses, deployment.config, deployment.file).map(({ line, column, message }) => ({
    kind: 'RequirementsUnmet',
    file,
    line,
    column,
    message,
  }));
}
