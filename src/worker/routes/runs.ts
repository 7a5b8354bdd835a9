/**
 * `GET /runs/:id`, `GET /runs/:id/events`, `POST /runs/:id/asks/:ask_id`,
 * `POST /runs/:id/cancel`, `GET /runs/:id/files/*`.
 */
import { Hono } from 'hono';
import { credentialOf, requireApiToken } from '../auth.ts';
import { onlyKeys, parseJsonObject, readText } from '../body.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http-error.ts';
import type { ViewOutcome } from '../run-object-api.ts';
import { runObject } from '../run-ids.ts';
import { waitSeconds } from '../wait.ts';
import { KvRunStore, readRunRecord } from '../run-store-kv.ts';
import type { RunView } from '../run-view.ts';

/** The run routes. */
export const runRoutes = new Hono<{ Bindings: Env }>();

runRoutes.get('/runs/:id', requireApiToken, async (c) => {
  const id = c.req.param('id');
  const view = await runObject(c.env, id).view();
  if (view) return c.json(view);
  // The object no longer holds the run: its final record in KV, if there is one.
  const record = await readRunRecord(c.env.RUNVIL_KV, id);
  if (!record) throw new ApiError(404, `no run ${JSON.stringify(id)}`);
  const { events: _events, files: _files, args: _args, ...rest } = record;
  return c.json({ ...rest, pending: [] } satisfies RunView);
});

runRoutes.get('/runs/:id/events', requireApiToken, async (c) => {
  const run = runObject(c.env, c.req.param('id'));
  const url = new URL(c.req.url);
  const headers = new Headers();
  const lastEventId = c.req.header('last-event-id');
  if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
  const response = await run.fetch(new Request(`https://run/events${url.search}`, { headers }));
  if (response.status === 404) throw new ApiError(404, `no run ${JSON.stringify(c.req.param('id'))}`);
  return response;
});

runRoutes.post('/runs/:id/asks/:ask_id', async (c) => {
  const credential = await credentialOf(c.req.raw, c.env);
  const wait = waitSeconds(c.req.query('wait'));
  const run = runObject(c.env, c.req.param('id'));
  const body = parseJsonObject(await readText(c.req.raw));
  onlyKeys(body, ['answer']);
  if (typeof body.answer !== 'string') throw new ApiError(400, '`answer` must be a string: the operator\'s answer text', { field: 'answer' });
  // One call: the object answers once the run has suspended again or ended, or at `wait`.
  return c.json(answerWith(await run.answer(c.req.param('ask_id'), body.answer, credential, wait * 1000), c.req.param('id')));
});

runRoutes.post('/runs/:id/cancel', requireApiToken, async (c) => {
  const run = runObject(c.env, c.req.param('id'));
  const body = parseJsonObject(await readText(c.req.raw));
  onlyKeys(body, ['reason']);
  if (body.reason !== undefined && typeof body.reason !== 'string') throw new ApiError(400, '`reason` must be a string', { field: 'reason' });
  return c.json(answerWith(await run.cancel(body.reason?.trim() || 'cancelled through the API'), c.req.param('id')));
});

runRoutes.get('/runs/:id/files/*', requireApiToken, async (c) => {
  const id = c.req.param('id');
  const prefix = `/runs/${id}/files/`;
  const path = decodeURIComponent(c.req.path.slice(prefix.length));
  const run = runObject(c.env, id);
  if (path === '' || path.endsWith('/')) {
    const files = (await run.files(path)) ?? (await new KvRunStore(c.env.RUNVIL_KV, id).list(path));
    return c.json({ files });
  }
  let text = await run.file(path);
  if (text === undefined) text = await new KvRunStore(c.env.RUNVIL_KV, id).read(path);
  if (text === null || text === undefined) throw new ApiError(404, `run ${id} has no file ${JSON.stringify(path)}`);
  return c.text(text);
});

function answerWith(outcome: ViewOutcome, runId: string): RunView {
  if (!outcome.ok) throw new ApiError(outcome.status, outcome.status === 404 && outcome.message === 'no such run' ? `no run ${JSON.stringify(runId)}` : outcome.message);
  return outcome.view;
}
