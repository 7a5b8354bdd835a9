/**
 * A wall-clock limit per section entry, for hosts whose clock advances while Lua computes
 * (the command line; not Workers, whose clock stands still during CPU work, and whose own
 * CPU limit is the backstop there). It measures the time an entry spends computing, its Lua
 * and the C functions it calls, summed over the entry; waits on effects (tools, models, the
 * operator) and on other chains do not count. The count hook reads it, so an entry stuck in
 * one long C call ends at the first hook after that call returns.
 */

/** The limit and the clock it is read from. */
export interface EntryTimeLimit {
  /** How long one entry may compute, in seconds. */
  seconds: number;
  /** Milliseconds from any fixed point (performance.now). */
  now: () => number;
  /**
   * Told each time an entry's Lua starts (`since`, on the clock of `now`) or stops (null),
   * with what the entry computed before: a watchdog outside the thread follows it there.
   */
  observe?: (since: number | null, spentMs: number, section: string) => void;
}

/** One entry's computing time, against the limit. */
export class EntryClock {
  private spentMs = 0;
  private since: number | null = null;
  private readonly limitMs: number;

  constructor(
    private readonly limit: EntryTimeLimit,
    private readonly section: string,
  ) {
    this.limitMs = limit.seconds * 1000;
  }

  /** The entry's Lua starts or goes on. */
  start(): void {
    this.since = this.limit.now();
    this.limit.observe?.(this.since, this.spentMs, this.section);
  }

  /** The entry's Lua stops: it waits on something, or has ended. */
  halt(): void {
    if (this.since === null) return;
    this.spentMs += this.limit.now() - this.since;
    this.since = null;
    this.limit.observe?.(null, this.spentMs, this.section);
  }

  /** True once the entry has computed for longer than the limit (read by the count hook). */
  over(): boolean {
    return this.since !== null && this.spentMs + (this.limit.now() - this.since) > this.limitMs;
  }

  /** The Limit message of this entry, once it went over. */
  message(): string {
    return entryTimeMessage(this.section, this.limit.seconds);
  }
}

/** The Limit message of an entry of `section` that computed for longer than `seconds`. */
export function entryTimeMessage(section: string, seconds: number): string {
  return `section ${JSON.stringify(section)} computed for more than ${seconds} s of wall clock in one entry (the entry time limit, --entry-timeout; waits on tools, models and the operator do not count)`;
}
