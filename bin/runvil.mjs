#!/usr/bin/env node
// The runvil command: runs the TypeScript command line through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const { processIo } = await import('../src/cli/io.ts');
const { parseCommandLine } = await import('../src/cli/args.ts');
const { supervised, superviseCommand } = await import('../src/cli/supervisor.ts');

/** The command, when it runs prompts under the entry watchdog; null for any other (a usage error among them). */
function watchedCommand(argv) {
  try {
    const command = parseCommandLine(argv);
    return supervised(command) ? command : null;
  } catch {
    return null;
  }
}

let status;
try {
  const argv = process.argv.slice(2);
  const command = watchedCommand(argv);
  status = command ? await superviseCommand(new URL('./runvil-worker.mjs', import.meta.url), argv, command, processIo()) : await main(argv, processIo());
} catch (error) {
  process.stderr.write(`runvil: internal error: ${error?.stack ?? error}\n`);
  status = 1;
}
// Let the output drain, then leave even if a socket or the terminal would keep Node alive.
await new Promise((resolve) => process.stdout.write('', resolve));
await new Promise((resolve) => process.stderr.write('', resolve));
process.exit(status);
