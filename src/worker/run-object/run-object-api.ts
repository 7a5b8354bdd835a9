/**
 * What the Worker asks of a run object (RPC), and what it answers. Refusals are answers
 * with the HTTP status the route gives them, so that a refused request changes nothing.
 */
import type { JournalEntry } from '../../engine/journal.ts';
import type { Json } from '../../json/json.ts';
import type { ToolResult } from '../../host/tool-calls.ts';
import type { PackSnapshot } from '../../host/remote/configured-packs.ts';
import type { NotificationDelivery } from '../outbox/outbox.ts';
import type { AskInfo, ObjectView, RunStatus } from './run-view.ts';
import type { RunBuild } from '../../host/run-build.ts';

/** A new run: the prompt as it is now (a later upload does not change a run), its args and seed. */
export interface StartSpec {
  prompt: string;
  source: string;
  args: { [name: string]: Json };
  seed: string;
  /** How long the run may last, in seconds, before it ends as Cancelled. */
  timeout_seconds: number;
  webhook_id?: string;
  /** Args whose values came from outside (a trigger's payload): the run reads them as untrusted text. */
  untrusted_args?: string[];
}

/** A fork (POST /runs/:id/fork): a new run of `source` whose journal starts with `journal`, checked first. */
export interface ForkSpec extends Omit<StartSpec, 'webhook_id'> {
  /** The original's first entries, with the fork's answers in place. */
  journal: JournalEntry[];
  /** The index in `journal` of the first ask whose answer the fork changed, or null. */
  first_replaced: number | null;
  forked_from: { run_id: string; at: number };
  /** The configured Packs the original run was prepared with (null: it never was); the fork keeps their tool lists. */
  packs: PackSnapshot[] | null;
}

/** What a fork is made from, and a replay of the run needs (GET /runs/:id/journal): the original run as it stands (it is not running). */
export interface ForkSource {
  ok: true;
  run_id: string;
  /** Any status but running. */
  status: RunStatus;
  prompt: string;
  source: string;
  args: { [name: string]: Json };
  /** The args the run reads as untrusted text; a fork reads them so too. */
  untrusted_args?: string[];
  seed: string;
  journal: JournalEntry[];
  /** The configured Packs the run was prepared with, or null before it was. */
  packs: PackSnapshot[] | null;
  /** The build the run started on, or null for a run started before builds were kept. */
  build: RunBuild | null;
}

/**
 * Why a run object refused, for routes to match; the message is for people and may change.
 *
 *   no-run         the object holds no run
 *   run-exists     a fork onto an id that holds a run
 *   not-ended      a test file of a run that has not ended
 *   cancelled      a test file of a cancelled run
 *   running        a fork of a run that is running
 *   fork-diverges  the fork's prompt does not parse, or cannot reproduce the journal it starts with
 *   no-ask         the run has no such ask
 *   no-call        the run has no such tool call
 *   taken          the ask was answered, or the call has a result, and this one differs
 *   expired        the ask's or the call's deadline passed
 *   closed         the task that asked or called was cancelled
 *   run-ended      the run has ended (an answer, a result, a cancellation too late)
 *   not-a-choice   an answer outside the ask's choices (the refusal lists them)
 *   not-a-fit      an answer that does not fit the ask: not its form's object (the refusal names the field), or an object for an ask without a form
 */
export type RefusalReason =
  | 'no-run'
  | 'run-exists'
  | 'not-ended'
  | 'cancelled'
  | 'running'
  | 'fork-diverges'
  | 'no-ask'
  | 'no-call'
  | 'taken'
  | 'expired'
  | 'closed'
  | 'run-ended'
  | 'not-a-choice'
  | 'not-a-fit';

/** A refusal: why (for the route), the status and the message the API answers. */
export interface Refusal {
  ok: false;
  reason: RefusalReason;
  status: 400 | 403 | 404 | 409;
  message: string;
  /** An answer outside the ask's choices: the choices. */
  choices?: string[];
  /** An answer that does not fit the ask's form: the form's field that does not (absent: the answer as a whole). */
  field?: string;
}

/** The refusal of a request to an object that holds no run (routes answer it naming the run id they were given). */
export const NO_RUN: Refusal = { ok: false, reason: 'no-run', status: 404, message: 'no such run' };

/** A run's view, or why the request was refused. */
export type ViewOutcome = { ok: true; view: ObjectView } | Refusal;

/** How an answer's call settles. */
export interface AnswerOptions {
  /** Answers the run once it is no longer running (as settle), or after this many ms; 0 (the default): at once. */
  waitMs?: number;
  /**
   * Settles once the ask's index rows are written, so the ask is out of
   * `GET /asks?status=pending` when the caller learns it was taken (read-your-writes; the
   * default). The write runs while the run resumes.
   */
  indexed?: boolean;
}

/** An answer taken (or the same answer again: `repeated`): the run's view and the ask answered. */
export type AnswerOutcome = { ok: true; view: ObjectView; ask: AskInfo; repeated?: true } | Refusal;

/** A tool result taken (or the same result again), or why not. */
export type ToolResultOutcome = { ok: true } | Refusal;

/** A run object's RPC methods. */
export interface RunObjectApi {
  /**
   * Starts the run; a second start (a redelivered webhook) starts nothing and answers the run
   * as it is. With `waitMs`, answers the run once it is no longer running (as settle).
   */
  start(spec: StartSpec, waitMs?: number): Promise<{ created: boolean; view: ObjectView }>;
  /** The run, or null when this object holds none. */
  view(): Promise<ObjectView | null>;
  /**
   * Answers an ask (the Worker has checked the credential); the same answer again is taken
   * as a retry, a different one refused with 409.
   */
  answer(askId: string, answer: Json, answeredBy: string | null, options?: AnswerOptions): Promise<AnswerOutcome>;
  /**
   * Delivers the result of a tool call that waits (the Worker has checked the credential);
   * the same result again is taken as a retry, a different one refused with 409.
   */
  toolResult(callId: string, result: ToolResult): Promise<ToolResultOutcome>;
  cancel(reason: string): Promise<ViewOutcome>;
  /** The run's notifications and how their delivery went; undefined when this object holds no run. */
  notifications(): Promise<NotificationDelivery[] | undefined>;
  /** A file of the run, or null; undefined when this object holds no run. */
  file(path: string): Promise<string | null | undefined>;
  /** The run's file paths under `prefix`; undefined when this object holds no run. */
  files(prefix: string): Promise<string[] | undefined>;
  /** The run's test file (YAML text), for a run that has ended. */
  testFile(): Promise<{ ok: true; text: string } | Refusal>;
  /** What a fork of the run starts from; refused while the run is running. */
  forkSource(): Promise<ForkSource | Refusal>;
  /**
   * Starts this object's run as a fork: refused (409, naming the first step that differs)
   * when the prompt cannot reproduce the journal it starts with; then as `start`.
   */
  fork(spec: ForkSpec, waitMs?: number): Promise<ViewOutcome>;
  /** `GET /events` as server-sent events (history, then live). */
  fetch(request: Request): Promise<Response>;
}
