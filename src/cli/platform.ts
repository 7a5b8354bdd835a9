/**
 * The command line's one LuaPlatform: wasmoon's factory and compiled runtime are made once
 * per process and shared by every run (a `runvil test` run uses it for every test file).
 */
import wasmoon from 'wasmoon';
import type { EntryTimeLimit } from '../engine/entry-clock.ts';
import { LuaPlatform } from '../engine/lua/vm.ts';

const { LuaFactory } = wasmoon;

let shared: Promise<LuaPlatform> | undefined;

/** The process's LuaPlatform, created on first use. */
export function cliPlatform(): Promise<LuaPlatform> {
  shared ??= LuaPlatform.create(() => new LuaFactory());
  return shared;
}

let watcher: Pick<EntryTimeLimit, 'now' | 'observe'> | null = null;

/** Makes every entry clock of this thread read `clock` and tell its watchdog (command-worker.ts). */
export function watchEntries(clock: Pick<EntryTimeLimit, 'now' | 'observe'>): void {
  watcher = clock;
}

/**
 * The run option of `--entry-timeout SECONDS` (none for 0). The Engine's count hook reads
 * the clock: an entry that computes too long ends with Limit the next time Lua has control,
 * with its events. Under the supervisor (supervisor.ts) the clock is shared with it too, for
 * the entry that never gives Lua control back.
 */
export function entryTimeLimit(seconds: number): { entryTimeLimit?: EntryTimeLimit } {
  if (seconds <= 0) return {};
  return { entryTimeLimit: watcher ? { seconds, ...watcher } : { seconds, now: () => performance.now() } };
}
