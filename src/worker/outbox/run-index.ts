/**
 * The index of runs and asks in D1 (`RUNVIL_DB`, migrations/0001_index.sql): what
 * `GET /runs` and `GET /asks` read. Run objects write their rows through their outbox
 * (outbox.ts); each write carries the run's outbox version, and a row is replaced only by a
 * write of the same or a higher version, so a late or repeated delivery never makes a row
 * stale. Pages are read by keyset (the cursor holds the last row's sort key), so a page
 * costs the same at the 100,000th run as at the first, each query served by an index whose
 * columns are its filter and its order.
 */
import type { D1Database, D1Statement } from '../platform-types.ts';
import type { RunStatus } from '../run-object/run-view.ts';

/** What an ask is, as `/asks` filters it. */
export type AskStatus = 'pending' | 'answered' | 'expired' | 'cancelled';

/** The statuses `GET /asks?status=` takes. */
export const ASK_STATUSES: readonly AskStatus[] = ['pending', 'answered', 'expired', 'cancelled'];

/** A run's row. */
export interface RunRow {
  run_id: string;
  prompt: string;
  status: RunStatus;
  created_at: string;
  ended_at: string | null;
  pending_count: number;
  /** The build the run started on as JSON text (migrations/0004_run_builds.sql), or null for a run started before builds were kept. */
  build: string | null;
}

/** An ask's row. */
export interface AskRow {
  run_id: string;
  ask_id: string;
  prompt: string;
  task: string;
  question: string | null;
  /** A JSON array of strings, or null. */
  choices: string | null;
  /** The ask's form as JSON text (migrations/0003_ask_forms.sql), or null. */
  form: string | null;
  asked_at: string;
  expires_at: string | null;
  status: AskStatus;
  answered_by: string | null;
  closed_at: string | null;
}

/** The statements that write a run's row and some of its asks' rows at `version`. */
export function indexWrites(db: D1Database, version: number, run: RunRow, asks: readonly AskRow[]): D1Statement[] {
  const statements = [
    db
      .prepare(
        `INSERT INTO runs (run_id, prompt, status, created_at, ended_at, pending_count, version, build) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, ended_at = excluded.ended_at,
           pending_count = excluded.pending_count, version = excluded.version, build = excluded.build
         WHERE excluded.version >= runs.version`,
      )
      .bind(run.run_id, run.prompt, run.status, run.created_at, run.ended_at, run.pending_count, version, run.build),
  ];
  for (const ask of asks) {
    statements.push(
      db
        .prepare(
          `INSERT INTO asks (run_id, ask_id, prompt, task, question, choices, asked_at, expires_at, status, answered_by, closed_at, version, form)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
           ON CONFLICT (run_id, ask_id) DO UPDATE SET status = excluded.status, answered_by = excluded.answered_by,
             closed_at = excluded.closed_at, version = excluded.version
           WHERE excluded.version >= asks.version`,
        )
        .bind(
          ask.run_id,
          ask.ask_id,
          ask.prompt,
          ask.task,
          ask.question,
          ask.choices,
          ask.asked_at,
          ask.expires_at,
          ask.status,
          ask.answered_by,
          ask.closed_at,
          version,
          ask.form,
        ),
    );
  }
  return statements;
}

/** Writes a run's row and its asks' rows at `version`, in one transaction. */
export async function writeIndex(db: D1Database, version: number, run: RunRow, asks: readonly AskRow[]): Promise<void> {
  await db.batch(indexWrites(db, version, run, asks));
}

/** Where a page starts: after the row with this sort key. */
export interface RunsAfter {
  created_at: string;
  run_id: string;
}

/** `GET /runs`'s query. */
export interface RunsQuery {
  prompt: string | null;
  status: RunStatus | null;
  limit: number;
  after: RunsAfter | null;
}

/** The SQL and parameters of a page of runs, newest first. */
export function runsPageSql(query: RunsQuery): { sql: string; params: (string | number)[] } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (query.prompt !== null) where.push(`prompt = ?${params.push(query.prompt)}`);
  if (query.status !== null) where.push(`status = ?${params.push(query.status)}`);
  if (query.after !== null) where.push(`(created_at, run_id) < (?${params.push(query.after.created_at)}, ?${params.push(query.after.run_id)})`);
  const sql =
    'SELECT run_id, prompt, status, created_at, ended_at, pending_count, build FROM runs' +
    (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
    ` ORDER BY created_at DESC, run_id DESC LIMIT ?${params.push(query.limit)}`;
  return { sql, params };
}

/** Up to `limit` runs, newest first, after `after`. */
export async function runsPage(db: D1Database, query: RunsQuery): Promise<RunRow[]> {
  const { sql, params } = runsPageSql(query);
  return (
    await db
      .prepare(sql)
      .bind(...params)
      .all<RunRow>()
  ).results;
}

/** Where a page of asks starts: after the ask with this sort key. */
export interface AsksAfter {
  asked_at: string;
  run_id: string;
  ask_id: string;
}

/** `GET /asks`'s query. */
export interface AsksQuery {
  status: AskStatus;
  prompt: string | null;
  limit: number;
  after: AsksAfter | null;
}

/** The SQL and parameters of a page of asks: pending ones oldest first, the others newest first. */
export function asksPageSql(query: AsksQuery): { sql: string; params: (string | number)[] } {
  const params: (string | number)[] = [];
  const where = [`status = ?${params.push(query.status)}`];
  if (query.prompt !== null) where.push(`prompt = ?${params.push(query.prompt)}`);
  const oldestFirst = query.status === 'pending';
  if (query.after !== null) {
    const key = `(?${params.push(query.after.asked_at)}, ?${params.push(query.after.run_id)}, ?${params.push(query.after.ask_id)})`;
    where.push(`(asked_at, run_id, ask_id) ${oldestFirst ? '>' : '<'} ${key}`);
  }
  const direction = oldestFirst ? 'ASC' : 'DESC';
  const sql =
    'SELECT run_id, ask_id, prompt, task, question, choices, form, asked_at, expires_at, status, answered_by, closed_at FROM asks' +
    ` WHERE ${where.join(' AND ')} ORDER BY asked_at ${direction}, run_id ${direction}, ask_id ${direction} LIMIT ?${params.push(query.limit)}`;
  return { sql, params };
}

/** Up to `limit` asks of one status, after `after`. */
export async function asksPage(db: D1Database, query: AsksQuery): Promise<AskRow[]> {
  const { sql, params } = asksPageSql(query);
  return (
    await db
      .prepare(sql)
      .bind(...params)
      .all<AskRow>()
  ).results;
}
