/**
 * `GET /runs` and `GET /asks` (API token): runs and asks across the deployment, read from
 * the index (run-index.ts), a page at a time.
 */
import { Hono } from 'hono';
import { publicAsk } from '../waits/ask-view.ts';
import { requireScope } from '../http/auth.ts';
import type { Env } from '../env.ts';
import { decodeCursor, encodeCursor, limitOf, listParams, oneOf, promptFilter } from '../http/list-query.ts';
import { ASK_STATUSES, asksPage, runsPage, type AskRow, type AskStatus } from '../outbox/run-index.ts';
import type { PendingAsk, RunStatus } from '../run-object/run-view.ts';
import type { AskForm } from '../../host/ask-form.ts';
import type { RunBuild } from '../../host/run-build.ts';

const RUN_STATUSES: readonly RunStatus[] = ['running', 'suspended', 'completed', 'failed', 'cancelled'];

/** An ask as `GET /asks` lists it: the pending-ask view, with its status and who answered. */
export interface ListedAsk extends PendingAsk {
  status: AskStatus;
  answered_by: string | null;
}

/** The list routes. */
export const listRoutes = new Hono<{ Bindings: Env }>();

listRoutes.get('/runs', requireScope('runs:read'), async (c) => {
  const params = listParams(new URL(c.req.url), ['prompt', 'status', 'limit', 'cursor']);
  const limit = limitOf(params.get('limit'));
  const after = decodeCursor('runs', params.get('cursor'), 2);
  const rows = await runsPage(c.env.RUNVIL_DB, {
    prompt: promptFilter(params.get('prompt')),
    status: oneOf('status', params.get('status'), RUN_STATUSES),
    limit: limit + 1,
    after: after && { created_at: after[0]!, run_id: after[1]! },
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return c.json({
    runs: page.map((row) => ({
      run_id: row.run_id,
      prompt: row.prompt,
      status: row.status,
      created_at: row.created_at,
      ended_at: row.ended_at,
      pending_count: row.pending_count,
      build: row.build === null ? null : (JSON.parse(row.build) as RunBuild),
    })),
    next_cursor: rows.length > limit && last ? encodeCursor('runs', [last.created_at, last.run_id]) : null,
  });
});

listRoutes.get('/asks', requireScope('runs:read'), async (c) => {
  const params = listParams(new URL(c.req.url), ['status', 'prompt', 'limit', 'cursor']);
  const status = oneOf('status', params.get('status'), ASK_STATUSES) ?? 'pending';
  const limit = limitOf(params.get('limit'));
  const list = `asks:${status}`;
  const after = decodeCursor(list, params.get('cursor'), 3);
  const rows = await asksPage(c.env.RUNVIL_DB, {
    status,
    prompt: promptFilter(params.get('prompt')),
    limit: limit + 1,
    after: after && { asked_at: after[0]!, run_id: after[1]!, ask_id: after[2]! },
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return c.json({
    asks: await Promise.all(page.map((row) => listedAsk(c.env, row))),
    next_cursor: rows.length > limit && last ? encodeCursor(list, [last.asked_at, last.run_id, last.ask_id]) : null,
  });
});

async function listedAsk(env: Env, row: AskRow): Promise<ListedAsk> {
  const ask = await publicAsk(env, {
    kind: 'ask',
    ask_id: row.ask_id,
    run_id: row.run_id,
    prompt: row.prompt,
    task: row.task,
    question: row.question,
    choices: row.choices === null ? null : (JSON.parse(row.choices) as string[]),
    form: row.form === null || row.form === undefined ? null : (JSON.parse(row.form) as AskForm),
    asked_at: row.asked_at,
    expires_at: row.expires_at,
  });
  return { ...ask, status: row.status, answered_by: row.answered_by };
}
