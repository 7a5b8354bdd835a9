/**
 * How a run looks from outside: the status and records the API answers, the records the
 * run object keeps, and the final record written to KV.
 */
import type { Json } from '../../json/json.ts';
import type { AskForm } from '../../host/ask-form.ts';
import type { DeploymentBuild, RunBuild } from '../../host/run-build.ts';

/** A run's status. `suspended`: the run can go no further until an operator ask is answered. */
export type RunStatus = 'running' | 'suspended' | 'completed' | 'failed' | 'cancelled';

/** True for a status no run leaves. */
export const isFinal = (status: RunStatus): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

/** A run error as the API shows it. */
export interface RunErrorView {
  kind: string;
  message: string;
  /**
   * A Determinism error of a run that resumed on another build than it started on: both
   * builds (the message names them too). Absent from every other error.
   */
  started_build?: DeploymentBuild;
  resumed_build?: DeploymentBuild;
}

/** An operator ask as the run object shows it: everything but the token and answer URL, which the Worker adds (ask-view.ts). */
export interface AskInfo {
  kind: 'ask';
  ask_id: string;
  run_id: string;
  prompt: string;
  /** The chain that asks: `0`, a task such as `0.0`, a fanout arm such as `0.f0.2`. */
  task: string;
  question: string | null;
  /** The answers the ask takes, or null for any text. */
  choices: string[] | null;
  /** The form the answer fills (MCP's elicitation requestedSchema, ask-form.ts), or null: the answer is then a JSON object. */
  form: AskForm | null;
  /** Words a form ask takes in place of its object, which refuse it (an MCP server's elicitation: `decline`, `cancel`); absent: none. */
  refusals?: string[];
  asked_at: string;
  expires_at: string | null;
}

/** A tool call waiting on its result (its service answered 202), as `pending` lists it. */
export interface PendingToolCall {
  kind: 'tool';
  call_id: string;
  tool: string;
  called_at: string;
  deadline: string;
}

/** An open operator ask, as the API lists it (`pending`). */
export interface PendingAsk extends AskInfo {
  /** Answers this ask, and nothing else, without the API token (null when the deployment has no secret to derive it from). */
  token: string | null;
  /** Where the answer is posted: on public_url (or RUNVIL_ORIGIN), null when the deployment has neither (public-origin.ts). */
  answer_url: string | null;
}

/** `GET /runs/:id`; the run object answers it with `Ask` as AskInfo, the Worker with PendingAsk. */
export interface RunView<Ask = PendingAsk> {
  run_id: string;
  prompt: string;
  status: RunStatus;
  result: string | null;
  error: RunErrorView | null;
  /** Open asks and waiting tool calls, in the order they began. */
  pending: (Ask | PendingToolCall)[];
  created_at: string;
  ended_at: string | null;
  /** A fork's origin: the run it forked from and at how many of its journal entries. Absent for other runs. */
  forked_from?: { run_id: string; at: number };
  /** The build the run started on (src/host/run-build.ts); null for a run started before builds were kept. */
  build: RunBuild | null;
}

/** The run view as the run object gives it: its asks without tokens. */
export type ObjectView = RunView<AskInfo>;

/** One event of a run's stream, numbered by its place in the stream. */
export interface StreamEvent {
  seq: number;
  type: string;
  /** When the run object took it (ISO 8601); absent from events stored before it was kept. */
  at?: string;
  [field: string]: Json | undefined;
}

/** The record KV keeps of a finished run (`runs/{id}/record`). */
export interface RunRecord extends Omit<ObjectView, 'pending'> {
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
  /** A random token kept by records stored before tokens were derived (ask-token.ts); unused. */
  token?: string;
  state: 'pending' | 'answered' | 'closed';
  /** Counts the run's asks from 1, in the order they were asked (absent from records stored before it was kept). */
  order?: number;
  answer?: string;
  answered_at?: string;
  /** Who answered, as the answer said (up to 200 characters). */
  answered_by?: string;
  /** The answers the ask takes (absent or null: any text). */
  choices?: string[] | null;
  /** The form the answer fills (absent or null: none; records stored before forms have none). */
  form?: AskForm | null;
  /** Words the form ask takes in place of its object (an MCP server's elicitation: `decline`, `cancel`); absent: none. */
  refusals?: string[];
  /** When the ask closes as expired, if it has a timeout. */
  expires_at?: string | null;
  /** Why a closed ask closed: its deadline passed, or the run or its task ended (absent: cancelled). */
  closed_reason?: 'expired' | 'cancelled';
  closed_at?: string;
}
