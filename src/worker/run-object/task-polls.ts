/**
 * The alarm's duty to the tool calls an MCP server turned into tasks (src/host/remote/mcp/
 * mcp-task-call.ts): each waiting call's task is polled when its next poll is due, from the
 * run's storage, whether or not the run is in memory. A task that ended settles its call (the
 * live run's chain is handed the result, or the run is replayed and finds it); one still under
 * way gets its next poll; one asking for input has its requests kept with the call, and the
 * chain asks them (the live one is nudged, or the run is replayed). Once a call waiting on a
 * task has ended without its result (its run or task cancelled, its deadline passed), the
 * server is asked to cancel the task, once.
 */
import type { ConfigVars } from '../../host/remote/mcp/mcp-pack.ts';
import { mcpEndpoint, mcpToolManifests } from '../../host/remote/mcp/mcp-pack.ts';
import { cancelTask, nextPollAt, pollTask, type TaskReach } from '../../host/remote/mcp/mcp-tasks.ts';
import type { CallRecord } from '../../host/tool-calls.ts';
import { storedLedgers } from '../waits/stored-waits.ts';
import type { LiveRun } from './live-run.ts';
import type { RunState } from './run-state.ts';
import { isFinal } from './run-view.ts';

/** What the duty works on: the run's state, its live run if in memory, and the environment `${NAME}` is read from. */
export interface TaskPollSeams {
  state: RunState;
  live(): LiveRun | null;
  resume(): void;
  refreshStatus(): void;
  vars: ConfigVars;
}

/** Polls the tasks due at `now` and cancels those of calls that ended without their result. */
export async function pollDueTasks(seams: TaskPollSeams, now: number): Promise<void> {
  const { state } = seams;
  if (!isFinal(state.progress().status)) {
    for (const record of state.calls()) {
      if (record.state !== 'waiting' || !record.task || record.task.input !== undefined || record.task.next_poll_at > now) continue;
      await pollOne(seams, record, now);
    }
  }
  for (const record of state.calls()) {
    if (!record.task || record.task.cancel_sent || (record.state !== 'closed' && record.state !== 'expired')) continue;
    // Asked once, and marked before it is sent: an alarm that runs meanwhile does not ask again, and a server that
    // cannot be reached now does not keep the alarm coming back for a task nobody waits on.
    state.putCall({ ...record, task: { ...record.task, cancel_sent: true } });
    const reach = reachOf(state, record, seams.vars);
    if (reach) await cancelTask(record.task, reach);
  }
}

/** When the duty is next due: the earliest poll of a waiting call's task, or now for a task to cancel; null for none. */
export function nextTaskDuty(state: RunState, now: number): number | null {
  let next: number | null = null;
  const final = isFinal(state.progress().status);
  for (const record of state.calls()) {
    if (!record.task) continue;
    let at: number | null = null;
    if (!final && record.state === 'waiting' && record.task.input === undefined) at = record.task.next_poll_at;
    if ((record.state === 'closed' || record.state === 'expired') && !record.task.cancel_sent) at = now;
    if (at !== null && (next === null || at < next)) next = at;
  }
  return next;
}

async function pollOne(seams: TaskPollSeams, record: CallRecord, now: number): Promise<void> {
  const { state } = seams;
  // The next poll is not due while this one is out: an alarm that runs meanwhile does not poll the task again.
  state.putCall({ ...record, task: { ...record.task!, next_poll_at: nextPollAt(record.task!, now, Date.parse(record.deadline)) } });
  const reach = reachOf(state, record, seams.vars);
  const step = reach
    ? await pollTask(record.task!, reach, now, Date.parse(record.deadline))
    : ({ kind: 'result', result: { error: `${record.tool}: the run no longer knows the MCP server of this call's task` } } as const);
  // The call may have ended while the poll was out (the run cancelled, the deadline passed): what it found is then stale.
  const latest = state.call(record.call_id);
  if (latest?.state !== 'waiting') return;
  const live = seams.live();
  if (step.kind === 'result') {
    const progress = state.progress();
    storedLedgers(state).calls.take(record.call_id, step.result, { status: progress.status, ended: isFinal(progress.status) }, Date.now());
    if (live) live.calls.wake(record.call_id);
    else seams.resume();
    seams.refreshStatus();
    return;
  }
  state.putCall({ ...latest, task: step.task });
  if (step.kind === 'input') {
    if (live) live.calls.nudge(record.call_id);
    else seams.resume();
  }
}

/** Where the call's task is: its Pack's server as the run keeps it, and the tool's output kind; null when the run keeps no such Pack. */
function reachOf(state: RunState, record: CallRecord, vars: ConfigVars): TaskReach | null {
  const snapshot = state.packSnapshots()?.find((pack) => pack.fqName === record.task!.pack);
  if (!snapshot) return null;
  const pack = {
    fqName: snapshot.fqName,
    description: snapshot.description,
    trusted: snapshot.trusted,
    source: { kind: 'mcp' as const, url: snapshot.mcp.url, headers: new Map(snapshot.mcp.headers) },
  };
  const endpoint = mcpEndpoint(snapshot.fqName, pack.source, vars);
  if (!endpoint.ok) return null;
  const tool = mcpToolManifests(pack, snapshot.tools).find((entry) => entry.id === record.tool);
  return { endpoint: endpoint.endpoint, toolId: record.tool, structured: tool?.output === 'structured' };
}
