/**
 * The run-wide caps on what a run keeps outside Lua: its files, its events and its journal.
 * Counted here, in the Engine, so the command line and the Worker hold the same caps; each
 * cap passed ends the run with `Limit`, naming the cap and its value.
 *
 * Files are counted from the run's own store requests, on a replay too, so a replay meets a
 * cap exactly where the run did. Event and journal bytes are counted as this execution makes
 * them (a replay does not measure what it replays: that is the cost the replay path avoids),
 * so a resumed run can only get further than it did, never stop earlier.
 */
import type { EffectRequest } from './effects.ts';
import type { RunLimits, StopSwitch } from './budget.ts';
import { formatBytes } from './lua/run-memory.ts';

/** Counts a run's files, events and journal against its limits. */
export class RunMeter {
  /** Bytes of every file the run has written, by path. */
  private readonly files = new Map<string, number>();
  private storeBytes = 0;
  private eventCount = 0;
  private eventBytes = 0;
  private journalEntries = 0;
  private journalBytes = 0;

  constructor(
    private readonly limits: RunLimits,
    /** The run's stop, which a passed cap ends with `Limit`. */
    private readonly runStop: StopSwitch,
  ) {}

  /**
   * Accounts a store request before it is performed; the Limit message (and the run ended)
   * when it would pass the cap on one file or on all of them.
   */
  store(request: EffectRequest): string | undefined {
    if (request.op === 'store.delete') {
      this.storeBytes -= this.files.get(request.path) ?? 0;
      this.files.delete(request.path);
      return undefined;
    }
    if (request.op !== 'store.write' && request.op !== 'store.append') return undefined;
    const had = this.files.get(request.path) ?? 0;
    const size = (request.op === 'store.append' ? had : 0) + utf8Length(request.text);
    if (size > this.limits.fileBytes) {
      return this.stop(
        `${request.op} would make ${request.path} ${formatBytes(size)}, past the run's cap of ${formatBytes(this.limits.fileBytes)} on one file (fileBytes)`,
      );
    }
    if (this.storeBytes - had + size > this.limits.storeBytes) {
      return this.stop(`${request.op} would take the run's files past their cap of ${formatBytes(this.limits.storeBytes)} in all (storeBytes)`);
    }
    this.storeBytes += size - had;
    this.files.set(request.path, size);
    return undefined;
  }

  /**
   * Accounts event number `seq`, measured when `event` is given (an event this execution
   * makes); false when it passes a cap and must not be reported.
   */
  event(seq: number, event?: object): boolean {
    if (seq > this.limits.events) {
      this.stop(`the run made more than its cap of ${this.limits.events.toLocaleString('en-US')} events (events)`);
      return false;
    }
    if (event === undefined) return true;
    this.eventBytes += jsonSize(event);
    if (this.eventBytes > this.limits.eventBytes) {
      this.stop(`the run's events took more than their cap of ${formatBytes(this.limits.eventBytes)} (eventBytes)`);
      return false;
    }
    return true;
  }

  /** Accounts a journal entry (measured when `entry` is given: a new one); false past a cap. */
  journal(entry?: object): boolean {
    if (++this.journalEntries > this.limits.journalEntries) {
      this.stop(`the run journaled more than its cap of ${this.limits.journalEntries.toLocaleString('en-US')} entries (journalEntries)`);
      return false;
    }
    if (entry === undefined) return true;
    this.journalBytes += jsonSize(entry);
    if (this.journalBytes > this.limits.journalBytes) {
      this.stop(`the run's journal took more than its cap of ${formatBytes(this.limits.journalBytes)} (journalBytes)`);
      return false;
    }
    return true;
  }

  /** Ends the run with `Limit` for a cap counted elsewhere (a tool output's, in the Host). */
  exceed(message: string): void {
    this.runStop.exceed(message);
  }

  private stop(message: string): string {
    this.runStop.exceed(message);
    return message;
  }
}

/**
 * About the length of value's JSON text, walked rather than written: a text counts its
 * UTF-16 length and quotes (escapes are not counted), a number a fixed 8. Every event and
 * journal entry is measured, and writing each as JSON cost a quarter of a tool round, most of
 * it the garbage the texts left.
 */
export function jsonSize(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
      return 8;
    case 'boolean':
      return 5;
    case 'object': {
      if (value === null) return 4;
      let size = 2;
      if (Array.isArray(value)) {
        for (const item of value) size += jsonSize(item) + 1;
        return size;
      }
      // JSON values (literals, JSON.parse) have only own enumerable keys: no hasOwn test needed.
      for (const key in value) {
        const item = (value as Record<string, unknown>)[key];
        if (item !== undefined) size += key.length + 4 + jsonSize(item);
      }
      return size;
    }
    default:
      return 0;
  }
}

/** The bytes of a text in UTF-8, counted without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code < 0xdc00) (i++, (bytes += 2));
    else bytes += 2;
  }
  return bytes;
}
