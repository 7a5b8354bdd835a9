/**
 * The `runvil` command line: reads the command, runs it, and answers the exit status
 * (0 ok, 1 a failed run, check or test, 2 a usage error).
 */
import { parseCommandLine, UsageError } from './args.ts';
import { helpText } from './help.ts';
import type { CliIo } from './io.ts';
import { formatUsageError } from './prompt-file.ts';

/** Runs the command line `argv` (without node and the script); answers the exit status. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const command = parseCommandLine(argv);
    // Each command loads its own modules (the Engine, wasmoon, the Packs) only when it runs,
    // so help and usage errors answer at once.
    switch (command.command) {
      case 'help':
        io.out(helpText(command.topic));
        return 0;
      case 'run':
        return await (await import('./run.ts')).runCommand(command, io);
      case 'check':
        return await (await import('./check.ts')).checkCommand(command, io);
      case 'test':
        return await (await import('./test.ts')).testCommand(command, io);
      case 'keys':
        return await (await import('./keys.ts')).keysCommand(command, io);
      case 'packs':
        return await (await import('./packs.ts')).packsCommand(command, io);
      case 'deploy-check':
        return await (await import('./deploy-check.ts')).deployCheckCommand(command, io);
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`${formatUsageError(error)}\n`);
    return 2;
  }
}
