/**
 * What the run object's alarm does when it fires (when it fires is run-alarm.ts): a finished
 * run not yet in KV is owed there, the outbox delivers what is due, asks and tool calls past
 * their deadline end, the MCP servers' tasks that calls wait on are polled (task-polls.ts),
 * and then the run times out, resumes (its execution died) or is only watched. Alarms are
 * delivered at least once, so each duty is safe to do twice.
 */
import type { ConfigVars } from '../../host/remote/mcp/mcp-pack.ts';
import type { Outbox } from '../outbox/outbox.ts';
import { storedLedgers } from '../waits/stored-waits.ts';
import type { LiveRun } from './live-run.ts';
import { alarmDuty, timeoutReason } from './run-alarm.ts';
import type { RunState } from './run-state.ts';
import { isFinal } from './run-view.ts';
import { pollDueTasks } from './task-polls.ts';
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
  /** The environment `${NAME}` references of the Packs' configuration are read from (a task's poll reaches its server). */
  vars: ConfigVars;
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
  passDeadlines(object, Date.now());
  await pollDueTasks(object, Date.now());
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
 * Ends, as expired, every ask and tool call past its deadline (src/host/waits/wait-ledger.ts): the live
 * run's chains that wait on them are handed the expiry (an ask's call fails with
 * OPERATOR_WINDOW_CLOSED, a tool call with "no result within"), or the run, not in memory,
 * is replayed, and its replay finds them expired. Asks and calls alike.
 */
function passDeadlines(object: AlarmSeams, now: number): void {
  if (isFinal(object.state.progress().status)) return;
  const { asks, calls } = storedLedgers(object.state);
  const expiredAsks = asks.expire(now);
  const expiredCalls = calls.expire(now);
  if (expiredAsks.length === 0 && expiredCalls.length === 0) return;
  const live = object.live();
  if (live) {
    for (const askId of expiredAsks) live.broker.wake(askId);
    for (const callId of expiredCalls) live.calls.wake(callId);
  } else object.resume();
  object.refreshStatus();
}
