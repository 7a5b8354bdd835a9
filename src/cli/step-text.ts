/**
 * A model step's text on standard error as the model produces it, so a person watching a run
 * reads the answer while it is written; standard output keeps only the result, for scripts.
 * With `--events`, each piece is a `model_delta` JSON line among the events instead.
 */
import type { RunEvent } from '../engine/events.ts';
import type { ModelDelta } from '../host/harness.ts';
import type { CliIo } from './io.ts';

/** What the run tells the printer: each delta, and each event (which ends a line of text). */
export interface StepTextPrinter {
  delta(delta: ModelDelta): void;
  event(event: RunEvent): void;
  /** The run has ended: a line of text still open is closed. */
  end(): void;
}

/** A printer of model steps' text to `io.err`, as text or (`asEvents`) as JSON lines. */
export function stepTextPrinter(io: CliIo, asEvents: boolean): StepTextPrinter {
  if (asEvents) return { delta: (delta) => io.err(`${JSON.stringify(delta)}\n`), event: () => undefined, end: () => undefined };
  // The step whose text the current line holds, or null when no line is open.
  let open: { step: number; task: string } | null = null;
  const close = () => {
    if (open !== null) io.err('\n');
    open = null;
  };
  return {
    delta(delta) {
      if (delta.restart) {
        if (open?.step === delta.step && open.task === delta.task) io.err('\n[the stream broke off; the model was asked again]\n');
        open = null;
        return;
      }
      if (open === null || open.step !== delta.step || open.task !== delta.task) {
        close();
        open = { step: delta.step, task: delta.task };
        // A task's text says whose it is: tasks' steps can stream at the same time.
        if (delta.task !== '0') io.err(`[task ${delta.task}] `);
      }
      io.err(delta.text);
    },
    event: close,
    end: close,
  };
}
