/**
 * The command line's wall-clock watchdog per section entry. `runvil run` and `runvil test`
 * run in a worker thread; this thread only relays their output and watches the entry that
 * computes. Each entry's own count hook ends it with Limit at `--entry-timeout` (entry-clock.ts),
 * with its events and outcome, whenever Lua gets control; an entry stuck in C, in one call
 * that never returns or in a loop of long C calls that runs few Lua instructions, never
 * reaches the hook, and the supervisor then stops the thread a second later and reports the
 * same Limit. (A thread, not a check alone: nothing in one thread interrupts a long C call.)
 */
import { Worker } from 'node:worker_threads';
import type { RunEvent } from '../engine/events.ts';
import { entryTimeMessage } from '../engine/entry-clock.ts';
import type { Command } from './args.ts';
import { newWatch, sharedNow } from './entry-watch.ts';
import type { CliIo } from './io.ts';

/** How long past the limit the supervisor waits for the entry's own hook to end it. */
const GRACE_MS = 1_000;
/** How often the supervisor looks at the computing entry. */
const LOOK_EVERY_MS = 100;

/** What the command's thread tells the supervisor. */
export type WorkerMessage =
  { type: 'out' | 'err'; text: string } | { type: 'section'; name: string } | { type: 'event'; event: RunEvent } | { type: 'done'; status: number };

/** What the command's thread is started with. */
export interface WorkerSetup {
  argv: string[];
  watch: Float64Array;
  stdinIsTerminal: boolean;
  /** True when the supervisor prints the run's events itself if it stops the thread (`run --json`). */
  relayEvents: boolean;
}

/** True for a command that runs prompts under the watchdog. */
export function supervised(command: Command): command is Extract<Command, { command: 'run' | 'test' }> {
  return (command.command === 'run' || command.command === 'test') && command.entryTimeoutSeconds > 0;
}

/** Runs `argv` (a supervised command) in a worker thread started from `workerUrl`; answers the exit status. */
export function superviseCommand(workerUrl: URL, argv: string[], command: Extract<Command, { command: 'run' | 'test' }>, io: CliIo): Promise<number> {
  const watch = newWatch();
  const json = command.command === 'run' && command.json;
  const setup: WorkerSetup = { argv, watch, stdinIsTerminal: io.stdinIsTerminal, relayEvents: json };
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(io.env)) if (value !== undefined) env[key] = value;
  const worker = new Worker(workerUrl, { workerData: setup, stdin: io.stdinIsTerminal, env });
  if (io.stdinIsTerminal && worker.stdin) io.stdin.pipe(worker.stdin);
  const events: RunEvent[] = [];
  let section = '';
  return new Promise<number>((resolve) => {
    let ended = false;
    const end = (status: number) => {
      if (ended) return;
      ended = true;
      clearInterval(look);
      if (io.stdinIsTerminal && worker.stdin) io.stdin.unpipe(worker.stdin);
      resolve(status);
    };
    worker.on('message', (message: WorkerMessage) => {
      switch (message.type) {
        case 'out':
          return io.out(message.text);
        case 'err':
          return io.err(message.text);
        case 'section':
          section = message.name;
          return;
        case 'event':
          events.push(message.event);
          return;
        case 'done':
          return end(message.status);
      }
    });
    worker.on('error', (error) => {
      io.err(`runvil: internal error: ${error.stack ?? error.message}\n`);
      end(1);
    });
    worker.on('exit', () => end(1));
    const look = setInterval(() => {
      const since = watch[0]!;
      if (ended || since === 0 || sharedNow() - since + watch[1]! <= command.entryTimeoutSeconds * 1000 + GRACE_MS) return;
      ended = true;
      clearInterval(look);
      const message = `${entryTimeMessage(section, command.entryTimeoutSeconds)}; it did not give Lua control back, so its thread was stopped`;
      void worker.terminate().finally(() => {
        report(io, command, message, events);
        resolve(1);
      });
    }, LOOK_EVERY_MS);
  });
}

/** Prints the Limit of a stopped thread as the command prints a failed run. */
function report(io: CliIo, command: Extract<Command, { command: 'run' | 'test' }>, message: string, events: RunEvent[]): void {
  const error = { kind: 'Limit', message };
  if (command.command === 'run' && command.json) {
    const seq = (events.at(-1)?.seq ?? 0) + 1;
    const failed = { seq, type: 'run_failed', section: null, task: '0', turn: 0, error };
    io.out(`${JSON.stringify({ status: 'failed', result: null, error, events: [...events, failed] })}\n`);
  } else if (command.command === 'run') {
    io.err(`error[Limit]: ${message}\n`);
  } else {
    io.out(`FAIL (the test running now)\n  error[Limit]: ${message}\n`);
    io.err('runvil: the tests after it did not run\n');
  }
}
