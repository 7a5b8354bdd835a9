/**
 * The run object's one alarm. It bounds how long a run may last (at its deadline the run
 * ends as Cancelled with the reason), resumes a run whose object was evicted or restarted
 * while it was running (nothing else would wake it: Durable Objects have no shutdown hook),
 * and writes a finished run to KV, a batch of keys per invocation (kv-sync.ts), retrying a
 * failed write. Alarms are delivered at least once, so whatever the alarm does is safe to
 * do twice. (A run that ends sets the alarm for a moment later, to write it to KV; while
 * keys remain, each invocation sets it again for at once.)
 */
import type { RunMeta, RunProgress } from './run-state.ts';
import { isFinal } from './run-view.ts';

/** How often a running run's object checks that the run is still live in memory. */
export const WATCHDOG_MS = 30_000;

/** How long after a run ends it is written to KV. */
export const KV_SYNC_DELAY_MS = 500;

/** How soon a failed write of a finished run to KV is tried again. */
export const KV_RETRY_MS = 10_000;

/** The default longest run, in seconds: one day. */
export const DEFAULT_RUN_TIMEOUT_SECONDS = 86_400;

/** What the alarm should do at `now`. */
export type AlarmDuty = 'none' | 'sync-kv' | 'time-out' | 'resume' | 'watch';

/** The duty of an alarm firing at `now`. */
export function alarmDuty(meta: RunMeta, progress: RunProgress, now: number, live: boolean): AlarmDuty {
  if (isFinal(progress.status)) return progress.kv_synced ? 'none' : 'sync-kv';
  if (now >= meta.deadline_at) return 'time-out';
  if (progress.status === 'running' && !live) return 'resume';
  return 'watch';
}

/** When the alarm should next fire, or null for never. */
export function nextAlarm(meta: RunMeta, progress: RunProgress, now: number): number | null {
  if (isFinal(progress.status)) return progress.kv_synced ? null : now + KV_RETRY_MS;
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
