/**
 * The run object's one alarm. It bounds how long a run may last (at its deadline the run
 * ends as Cancelled with the reason), resumes a run whose object was evicted or restarted
 * while it was running, within WATCHDOG_MS (nothing else would wake it: Durable Objects
 * have no shutdown hook),
 * and delivers the run object's outbox (outbox.ts: the index rows, the notifications, the
 * finished run's KV writes), and closes asks whose deadline passed. Alarms are delivered at
 * least once, so whatever the alarm does is safe to do twice. The object sets the alarm for
 * the earliest of these duties.
 */
import { storedLedgers } from '../waits/stored-waits.ts';
import type { RunMeta, RunProgress, RunState } from './run-state.ts';
import { isFinal } from './run-view.ts';
import { nextTaskDuty } from './task-polls.ts';

/**
 * How often a running run's object checks that the run is still live in memory. It is the
 * longest a running run whose process died (a crash, a restart, a deploy, the CPU limit)
 * waits before its replay starts, with no request to wake it. Each check is one short
 * invocation and one alarm write, while the run runs; a suspended run has no check.
 */
export const WATCHDOG_MS = 3_000;

/**
 * How many times in a row a running run's execution may die before it journals anything new
 * (each death is followed by a replay): a run whose every execution is killed at the same
 * point (the CPU limit) then ends with Limit rather than being replayed for ever.
 */
export const MAX_DEATHS_WITHOUT_PROGRESS = 3;

/** The Limit message of a run whose executions kept dying at the same point. */
export function deathsReason(deaths: number): string {
  return `the run's execution was stopped ${deaths} times in a row before it journaled anything new (Cloudflare's CPU limit per invocation, limits.cpu_ms, or a crash each time): it is not resumed again`;
}

/** The default longest run, in seconds: one day. */
export const DEFAULT_RUN_TIMEOUT_SECONDS = 86_400;

/** What the alarm should do at `now`. */
export type AlarmDuty = 'none' | 'time-out' | 'resume' | 'watch';

/** The duty of an alarm firing at `now`. */
export function alarmDuty(meta: RunMeta, progress: RunProgress, now: number, live: boolean): AlarmDuty {
  if (isFinal(progress.status)) return 'none';
  if (now >= meta.deadline_at) return 'time-out';
  if (progress.status === 'running' && !live) return 'resume';
  return 'watch';
}

/** When the alarm should next fire for the run's own duties (the outbox adds its own times), or null for never. */
export function nextAlarm(meta: RunMeta, progress: RunProgress, now: number): number | null {
  if (isFinal(progress.status)) return null;
  if (progress.status === 'suspended') return meta.deadline_at;
  return Math.min(meta.deadline_at, now + WATCHDOG_MS);
}

/** The Cancelled reason of a run past its deadline. */
export function timeoutReason(seconds: number): string {
  return `the run took longer than its limit of ${seconds} s (RUNVIL_RUN_TIMEOUT_SECONDS)`;
}

/** The run timeout configured by `RUNVIL_RUN_TIMEOUT_SECONDS`, in seconds. */
export function runTimeoutSeconds(text: unknown): number {
  const seconds = Number(text);
  return typeof text === 'string' && Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_RUN_TIMEOUT_SECONDS;
}

/**
 * When the alarm must run: the earliest of the run's duty (nextAlarm), `outboxDue` (the
 * outbox's next delivery), the next pending ask's deadline and the next waiting tool call's
 * deadline; a time already past is `now` (the alarm runs at once). Null when none is due.
 */
export function alarmTime(state: RunState, outboxDue: number | null, now: number): number | null {
  const meta = state.meta();
  if (!meta) return null;
  const progress = state.progress();
  const times = [isFinal(progress.status) ? null : nextAlarm(meta, progress, now), outboxDue];
  // A pending ask's or waiting tool call's deadline wakes the run (src/host/waits/wait-ledger.ts).
  if (!isFinal(progress.status)) {
    const { asks, calls } = storedLedgers(state);
    times.push(asks.nextDeadline(), calls.nextDeadline());
  }
  // A task a call waits on is polled when due; one whose call ended is cancelled, even after the run ended (task-polls.ts).
  times.push(nextTaskDuty(state, now));
  const due = times.filter((at): at is number => at !== null);
  return due.length === 0 ? null : Math.max(now, Math.min(...due));
}
