/**
 * A progress bar on standard error, redrawn in place when standard error is a terminal (at
 * most ten times a second), and nothing otherwise: a log gets the command's count line at
 * the end instead of a line per step.
 */
import type { CliIo } from './io.ts';

/** How often the bar is redrawn at most. */
const REDRAW_MS = 100;
const WIDTH = 30;

/** A progress bar: `update` with what is done of how many (more may come until `complete`), `end` clears it. */
export interface ProgressLine {
  update(done: number, total: number, complete: boolean): void;
  end(): void;
}

/** The progress bar of `io`, drawn only on a terminal. */
export function progressLine(io: CliIo, label = 'replaying'): ProgressLine {
  if (!io.errIsTerminal) return { update() {}, end() {} };
  let drawn = 0;
  let shown = false;
  return {
    update(done, total, complete) {
      const now = performance.now();
      if (now - drawn < REDRAW_MS && !(complete && done === total)) return;
      drawn = now;
      shown = true;
      const filled = total === 0 ? 0 : Math.min(WIDTH, Math.round((done / total) * WIDTH));
      io.err(`\r\x1b[K${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${done}/${total}${complete ? '' : '+'} runs`);
    },
    end() {
      if (shown) io.err('\r\x1b[K');
    },
  };
}
