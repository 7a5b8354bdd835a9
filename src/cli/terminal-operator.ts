/**
 * The operator of `runvil run`: answers given with `--answer` (or a script's `answers:`)
 * first, in order; then the person at the terminal when standard input is one (a form ask
 * field by field, terminal-form.ts); otherwise every further ask fails with the model-safe
 * message the test files use.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { RunEvent } from '../engine/events.ts';
import { fitAnswer } from '../host/ask-answer.ts';
import { OPERATOR_WINDOW_CLOSED, type Operator } from '../host/operator.ts';
import type { Json } from '../json/json.ts';
import type { CliIo } from './io.ts';
import { askFormAtTerminal } from './terminal-form.ts';

/** An operator that also follows the run's events, to show the person what the model said. */
export interface CommandLineOperator extends Operator {
  /** Hands the operator each run event as it happens. */
  heard(event: RunEvent): void;
  /** Stops reading the terminal; call it when the run has ended. */
  close(): void;
  /**
   * What to do about the first ask that failed for want of a terminal (no answer given
   * and standard input not one), or null when none did. The ask itself failed with the
   * model-safe closed window; this is for the person who ran the command.
   */
  noTerminalHint(): string | null;
}

/** Where the operator's answers came from before the terminal, for the hint. */
export interface AnswerSources {
  /** A `--script` file was given: its `answers:` come first. */
  script?: boolean;
}

/** The command line's operator: given answers, then the terminal, then a closed window. */
export function commandLineOperator(answers: readonly Json[], io: CliIo, sources: AnswerSources = {}): CommandLineOperator {
  let next = 0;
  let unansweredQuestion: string | null = null;
  // The model's latest text not yet shown: an ask the model makes often follows what it said.
  let unseen = '';
  let terminal: LineReader | undefined;
  let unread: Promise<string | null> | null = null;
  return {
    heard(event) {
      if (event.type === 'model_turn_completed' && typeof event.content === 'string' && event.content.trim() !== '') {
        unseen = event.content;
      }
    },
    async ask(context) {
      const choices = context.choices;
      const allowed = (text: string) => !choices || choices.includes(text);
      const answer = answers[next];
      if (answer !== undefined) {
        next++;
        // A given answer outside the ask's choices, or that does not fit its form, is refused, as the API refuses it; the ask goes on to the terminal.
        const fitted = fitAnswer({ id: 'asked', question: context.question, choices, form: context.form }, answer);
        if (fitted.ok) return { ok: true, text: fitted.text };
        if (context.form) io.err(`--answer ${JSON.stringify(answer)}: ${fitted.message}\n`);
        else io.err(`--answer ${JSON.stringify(answer)} is not one of the ask's choices (${choices!.map((c) => JSON.stringify(c)).join(', ')})\n`);
      }
      if (!io.stdinIsTerminal) {
        unansweredQuestion ??= context.question?.trim() || 'an ask';
        return { ok: false, message: OPERATOR_WINDOW_CLOSED };
      }
      const said = context.transcript?.trim() ? context.transcript : unseen;
      unseen = '';
      // Standard error, so the run result alone reaches standard output.
      if (said.trim() !== '') io.err(`${said.trimEnd()}\n`);
      const question = context.question?.trim() ? context.question.trim() : 'The run asks for your answer.';
      terminal ??= new LineReader(io.stdin);
      const lines = terminal;
      // With a timeout, the window closes at the deadline, as it does on the Worker.
      const deadline = context.timeout !== undefined ? Date.now() + context.timeout * 1000 : null;
      const readLine = async (): Promise<string | null | undefined> => {
        // A read a closed window left waiting is the next ask's: no typed line is lost.
        const read = unread ?? lines.next();
        unread = null;
        const line = await withDeadline(read, deadline);
        if (line === undefined) unread = read;
        return line;
      };
      if (context.form) {
        io.err(`${question}\n`);
        const text = await askFormAtTerminal(context.form, readLine, (line) => io.err(line));
        return text === null ? { ok: false, message: OPERATOR_WINDOW_CLOSED } : { ok: true, text };
      }
      io.err(`${question}${choices ? ` (${choices.join(' / ')})` : ''}\n> `);
      for (;;) {
        const line = await readLine();
        if (line === null || line === undefined) return { ok: false, message: OPERATOR_WINDOW_CLOSED };
        if (allowed(line)) return { ok: true, text: line };
        io.err(`Answer one of: ${choices!.join(', ')}\n> `);
      }
    },
    close() {
      terminal?.close();
    },
    noTerminalHint() {
      if (unansweredQuestion === null) return null;
      const used = answers.length === 0 ? 'no answer was given' : `the ${answers.length} given answer${answers.length === 1 ? ' was' : 's were'} used up`;
      const where = sources.script ? 'with --answer TEXT or under answers: in the --script file' : 'with --answer TEXT';
      return (
        `the run asked ${JSON.stringify(unansweredQuestion.slice(0, 200))}, ${used}, and standard input is not a terminal: ` +
        `give each ask its answer ${where} (repeatable, used in order), or run the command at a terminal to be asked`
      );
    },
  };
}

/** The line (null at the input's end), or undefined once `deadline` (ms since the epoch) has passed without one. */
async function withDeadline(line: Promise<string | null>, deadline: number | null): Promise<string | null | undefined> {
  if (deadline === null) return line;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closed = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()))));
  try {
    return await Promise.race([line, closed]);
  } finally {
    clearTimeout(timer);
  }
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
