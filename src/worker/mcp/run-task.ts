/**
 * A run as a task of the tasks extension (`io.modelcontextprotocol/tasks`): the task's id is
 * the run's id, its status the run's (a failed run is a tool error, so a completed call).
 */
import type { ObjectView } from '../run-object/run-view.ts';

/** The extension's identifier, as capabilities name it. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** How often a caller should poll a task, in ms. */
export const POLL_INTERVAL_MS = 1000;

/** The task of a run (without the status-specific fields). */
export function taskOf(view: ObjectView): Record<string, unknown> {
  return {
    taskId: view.run_id,
    status: taskStatus(view),
    createdAt: view.created_at,
    lastUpdatedAt: view.ended_at ?? new Date().toISOString(),
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

function taskStatus(view: ObjectView): string {
  switch (view.status) {
    case 'completed':
    case 'failed':
      // A failed run is a tool error, which the extension counts as a completed call.
      return 'completed';
    case 'cancelled':
      return 'cancelled';
    default:
      return view.pending.some((entry) => entry.kind === 'ask') ? 'input_required' : 'working';
  }
}
