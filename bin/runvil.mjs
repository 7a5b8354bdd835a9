#!/usr/bin/env node
// The runvil command: runs the TypeScript command line through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const { processIo } = await import('../src/cli/io.ts');

let status;
try {
  status = await main(process.argv.slice(2), processIo());
} catch (error) {
  process.stderr.write(`runvil: internal error: ${error?.stack ?? error}\n`);
  status = 1;
}
// Let the output drain, then leave even if a socket or the terminal would keep Node alive.
await new Promise((resolve) => process.stdout.write('', resolve));
await new Promise((resolve) => process.stderr.write('', resolve));
process.exit(status);
