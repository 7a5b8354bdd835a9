/**
 * What a command talks to: its output streams, its input and its environment. The real
 * process in `bin/runvil.mjs`; a recording double in tests.
 */
import type { Readable } from 'node:stream';
import type { RunEvent } from '../engine/events.ts';

/** A command's view of the process. */
export interface CliIo {
  /** Writes to standard output (the run result, reports). */
  out(text: string): void;
  /** Writes to standard error (errors, events, the operator's prompts). */
  err(text: string): void;
  /** Standard input, read by the operator at a terminal. */
  stdin: Readable;
  /** True when standard input is a terminal a person can type into. */
  stdinIsTerminal: boolean;
  /** True when standard error is a terminal, where a progress bar may redraw its line. */
  errIsTerminal?: boolean;
  env: Record<string, string | undefined>;
  /** Told each run event as it happens, when a supervisor follows them (supervisor.ts). */
  event?: (event: RunEvent) => void;
}

/** The io of the running process. */
export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stdin: process.stdin,
    stdinIsTerminal: process.stdin.isTTY === true,
    errIsTerminal: process.stderr.isTTY === true,
    env: process.env,
  };
}
