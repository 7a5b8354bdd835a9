/**
 * The operator of `runvil run`: answers given with `--answer` (or a script's `answers:`)
 * first, in order; then the person at the terminal when standard input is one; otherwise
 * every further ask fails with the model-safe message the test files use.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { RunEvent } from '../engine/events.ts';
import { OPERATOR_WINDOW_CLOSED, type Operator } from '../host/operator.ts';
import type { CliIo } from './io.ts';

/** An operator that also follows the run's events, to show the person what the model said. */
export interface CommandLineOperator extends Operator {
  /** Hands the operator each run event as it happens. */
  heard(event: RunEvent): void;
  /** Stops reading the terminal; call it when the run has ended. */
  close(): void;
}

/** The command line's operator: given answers, then the terminal, then a closed window. */
export function commandLineOperator(answers: readonly string[], io: CliIo): CommandLineOperator {
  let next = 0;
  // The model's latest text not yet shown: an ask the model makes often follows what it said.
  let unseen = '';
  let terminal: LineReader | undefined;
  return {
    heard(event) {
      if (event.type === 'model_turn_completed' && typeof event.content === 'string' && event.content.trim() !== '') {
        unseen = event.content;
      }
    },
    async ask(context) {
      const answer = answers[next];
      if (answer !== undefined) {
        next++;
        return { ok: true, text: answer };
      }
      if (!io.stdinIsTerminal) return { ok: false, message: OPERATOR_WINDOW_CLOSED };
      const said = context.transcript?.trim() ? context.transcript : unseen;
      unseen = '';
      // Standard error, so the run result alone reaches standard output.
      if (said.trim() !== '') io.err(`${said.trimEnd()}\n`);
      io.err(`${context.question?.trim() ? context.question.trim() : 'The run asks for your answer.'}\n> `);
      terminal ??= new LineReader(io.stdin);
      const line = await terminal.next();
      return line === null ? { ok: false, message: OPERATOR_WINDOW_CLOSED } : { ok: true, text: line };
    },
    close() {
      terminal?.close();
    },
  };
}

/** Lines of a stream, one per call; lines typed ahead wait their turn. */
class LineReader {
  private readonly lines: string[] = [];
  private readonly waiting: ((line: string | null) => void)[] = [];
  private ended = false;
  private readonly reader: Interface;

  constructor(input: Readable) {
    this.reader = createInterface({ input, terminal: false });
    this.reader.on('line', (line) => {
      const waiter = this.waiting.shift();
      if (waiter) waiter(line);
      else this.lines.push(line);
    });
    this.reader.on('close', () => {
      this.ended = true;
      for (const waiter of this.waiting.splice(0)) waiter(null);
    });
  }

  /** The next line, or null when the input has ended. */
  next(): Promise<string | null> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  close(): void {
    this.reader.close();
  }
}
