/**
 * How a run looks from outside: the status and records the API answers, the records the
 * run object keeps, and the final record written to KV.
 */
import type { Json } from '../prompt/types.ts';

/** A run's status. `suspended`: the run can go no further until an operator ask is answered. */
export type RunStatus = 'running' | 'suspended' | 'completed' | 'failed' | 'cancelled';

/** True for a status no run leaves. */
export const isFinal = (status: RunStatus): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

/** A run error as the API shows it. */
export interface RunErrorView {
  kind: string;
  message: string;
}

/** An open operator ask, as `GET /runs/:id` lists it. */
export interface PendingAsk {
  ask_id: string;
  question: string | null;
  asked_at: string;
  /** Answers this ask, and nothing else, without the API token. */
  token: string;
}

/** `GET /runs/:id`. */
export interface RunView {
  run_id: string;
  prompt: string;
  status: RunStatus;
  result: string | null;
  error: RunErrorView | null;
  pending: PendingAsk[];
  created_at: string;
  ended_at: string | null;
}

/** One event of a run's stream, numbered by its place in the stream. */
export interface StreamEvent {
  seq: number;
  type: string;
  [field: string]: Json | undefined;
}

/** The record KV keeps of a finished run (`runs/{id}/record`). */
export interface RunRecord extends Omit<RunView, 'pending'> {
  args: { [name: string]: Json };
  events: StreamEvent[];
  /** The run's file paths (each under `runs/{id}/files/`). */
  files: string[];
}

/** An operator ask as the run object stores it. */
export interface AskRecord {
  ask_id: string;
  question: string | null;
  asked_at: string;
  token: string;
  state: 'pending' | 'answered' | 'closed';
  /** Counts the run's asks from 1, in the order they were asked (absent from records stored before it was kept). */
  order?: number;
  answer?: string;
  answered_at?: string;
}
