/**
 * The run's limits and its stop switch: an instruction budget counted by a count hook (never
 * the clock, which does not advance during CPU work on Workers) and cancellation.
 */
import type { RunError } from './errors.ts';

/** Limits of one run. */
export interface RunLimits {
  /** Lua instructions the whole run may execute. */
  instructions: number;
  /** Bytes one section VM may hold of the wasm heap (its region, chunks and blocks from malloc). */
  memoryBytes: number;
  /** Bytes all of the run's live VMs may hold together (tasks and arms waiting included). */
  runMemoryBytes: number;
  /** Bytes (UTF-8) one file of the run's store may hold. */
  fileBytes: number;
  /** Bytes (UTF-8) all the run's files may hold together. */
  storeBytes: number;
  /** Events the run may make. */
  events: number;
  /** Bytes (as JSON) the run's events may take. */
  eventBytes: number;
  /** Entries the run's journal may hold. */
  journalEntries: number;
  /** Bytes (as JSON) the run's journal may take. */
  journalBytes: number;
  /** Section entries the run may make (walked, called, required sections do not count). */
  entries: number;
  /** Bytes of canonical JSON the run's var document may hold. */
  varBytes: number;
}

/** Defaults chosen so a runaway loop stops within seconds while real prompts never notice. */
export const DEFAULT_LIMITS: RunLimits = {
  instructions: 200_000_000,
  memoryBytes: 16 * 1024 * 1024,
  runMemoryBytes: 64 * 1024 * 1024,
  fileBytes: 8 * 1024 * 1024,
  storeBytes: 64 * 1024 * 1024,
  events: 100_000,
  eventBytes: 64 * 1024 * 1024,
  journalEntries: 100_000,
  journalBytes: 128 * 1024 * 1024,
  entries: 1000,
  varBytes: 8 * 1024 * 1024,
};

/** Counts instructions and carries the reason the run must stop, once there is one. */
export class StopSwitch {
  private used = 0;
  private reason: RunError | null = null;
  private announce: (error: RunError) => void = () => {};
  /** Settles when the run must stop, so a wait on an effect can end early. */
  readonly whenStopped: Promise<RunError> = new Promise((resolve) => {
    this.announce = resolve;
  });

  constructor(
    private readonly limits: RunLimits,
    signal?: AbortSignal,
  ) {
    signal?.addEventListener('abort', () => this.cancel(String(signal.reason ?? 'the run was cancelled')));
    if (signal?.aborted) this.cancel(String(signal.reason ?? 'the run was cancelled'));
  }

  /** Adds instructions; true when the run must stop. Called by the VMs' count hook. */
  spend(count: number): boolean {
    this.used += count;
    if (!this.reason && this.used > this.limits.instructions) {
      this.fail({
        kind: 'Limit',
        message: `the run used its instruction budget of ${this.limits.instructions.toLocaleString('en-US')} Lua instructions (an endless loop?)`,
      });
    }
    return this.reason !== null;
  }

  /** Asks the run to stop as cancelled at its next effect or instruction check. */
  cancel(why: string): void {
    this.fail({ kind: 'Cancelled', message: `the run was cancelled: ${why}` });
  }

  /** Stops the run with a Limit error (a cap other than instructions). */
  exceed(message: string): void {
    this.fail({ kind: 'Limit', message });
  }

  /** Stops the run with the given error, unless it is already stopping. */
  fail(error: RunError): void {
    if (this.reason) return;
    this.reason = error;
    this.announce(error);
  }

  /** Why the run must stop, or null. */
  get stopped(): RunError | null {
    return this.reason;
  }

  /** Instructions used so far. */
  get instructionsUsed(): number {
    return this.used;
  }
}
