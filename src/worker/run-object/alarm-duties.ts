/**
 * What the run object's alarm does when it fires (when it fires is run-alarm.ts): a finished
 * run not yet in KV is owed there, the outbox delivers what is due, asks and tool calls past
 * their deadline end, and then the run times out, resumes (its execution died) or is only
 * watched. Alarms are delivered at least once, so each duty is safe to do twice.
 */
import { OPERATOR_WINDOW_CLOSED } from '../../host/operator.ts';
import type { Outbox } from '../outbox/outbox.ts';
import { expireAsks } from '../waits/ask-broker.ts';
import { expireCalls } from '../waits/call-broker.ts';
import type { LiveRun } from './live-run.ts';
import { alarmDuty, timeoutReason } from './run-alarm.ts';
import type { RunState } from './run-state.ts';
import { isFinal } from './run-view.ts';
/** What the alarm works on: its run object's state, outbox and live run, and the object's lifecycle. */
export interface AlarmSeams {
  state: RunState;
  outbox: Outbox;
  /** The run's execution in this object's memory, or null. */
  live(): LiveRun | null;
  /** Resumes the run in memory (a replay of its journal first), unless it is there. */
  resume(): void;
  /** Cancels the run with `reason`. */
  stop(reason: string): Promise<void>;
  /** Records whether the live run is suspended or running. */
  refreshStatus(): void;
}

/** Does the alarm's duties, in the order the module's header gives; the object sets the next alarm after. */
export async function ringAlarm(object: AlarmSeams): Promise<void> {
  const { state, outbox } = object;
  const meta = state.meta();
  if (!meta) return;
  // A run that ended before the outbox kept its KV write is owed to KV all the same.
  const progress = state.progress();
  if (isFinal(progress.status) && !progress.kv_synced) outbox.oweKv(Date.now());
  await outbox.deliverDue(Date.now());
  passAskDeadlines(object, Date.now());
  passCallDeadlines(object, Date.now());
  switch (alarmDuty(meta, state.progress(), Date.now(), object.live() !== null)) {
    case 'time-out':
      await object.stop(timeoutReason(meta.timeout_seconds));
      break;
    case 'resume':
      object.resume();
      break;
  }
}

/**
 * Closes, as expired, every pending ask whose deadline has passed: the run's wait on it
 * ends with the closed window (the call fails with OPERATOR_WINDOW_CLOSED), from the live
 * run, or from a replay, which finds the ask closed.
 */
function passAskDeadlines(object: AlarmSeams, now: number): void {
  if (isFinal(object.state.progress().status)) return;
  const expired = expireAsks(object.state, now);
  if (expired.length === 0) return;
  const live = object.live();
  if (live) for (const askId of expired) live.broker.deliver(askId, { ok: false, message: OPERATOR_WINDOW_CLOSED });
  object.resume();
  object.refreshStatus();
}

/** Fails the waiting tool calls whose deadline has passed, waking their chains (by replay when the run is not in memory). */
function passCallDeadlines(object: AlarmSeams, now: number): void {
  if (isFinal(object.state.progress().status)) return;
  const expired = expireCalls(object.state, now);
  if (expired.length === 0) return;
  const live = object.live();
  if (live) for (const callId of expired) live.calls.wake(callId);
  else object.resume();
  object.refreshStatus();
}
