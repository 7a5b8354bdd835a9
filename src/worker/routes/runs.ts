/**
 * `GET /runs/:id`, `GET /runs/:id/events`, `POST /runs/:id/asks/:ask_id`,
 * `POST /runs/:id/cancel`, `GET /runs/:id/files/*`.
 */
import { Hono } from 'hono';
import { askTokenResponse, publicView } from '../waits/ask-view.ts';
import { bearerToken, checkScope, requireScope } from '../http/auth.ts';
import { endWhenRevoked } from '../keys/key-watch.ts';
import { allows } from '../keys/scopes.ts';
import { promptOfRun, runPromptScope } from './run-scope.ts';
import { answerCredential } from '../waits/answer-credential.ts';
import { checkJsonContentType, onlyKeys, parseJsonObject, readText } from '../http/body.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { refused } from './refused.ts';
import { rawPath } from '../http/request-path.ts';
import { runObject } from '../run-object/run-ids.ts';
import { waitSeconds } from '../http/wait-param.ts';
import { KvRunStore, readRunRecord } from '../outbox/run-store-kv.ts';
import type { RunView } from '../run-object/run-view.ts';
import type { Json } from '../../json/json.ts';

/** The longest `answered_by` an answer may carry, in characters. */
export const MAX_ANSWERED_BY_CHARS = 200;

/** The run routes. */
export const runRoutes = new Hono<{ Bindings: Env }>();

runRoutes.get('/runs/:id', requireScope('runs:read'), async (c) => {
  const id = c.req.param('id');
  const view = await runObject(c.env, id).view();
  if (view) return c.json(await publicView(c.env, view));
  // The object no longer holds the run: its final record in KV, if there is one.
  const record = await readRunRecord(c.env.RUNVIL_KV, id);
  if (!record) throw new ApiError(404, `no run ${JSON.stringify(id)}`);
  const { events: _events, files: _files, args: _args, ...rest } = record;
  // A record written before builds were kept has none.
  return c.json({ ...rest, build: rest.build ?? null, pending: [] } satisfies RunView);
});

runRoutes.get('/runs/:id/events', requireScope('runs:read'), async (c) => {
  const run = runObject(c.env, c.req.param('id'));
  const url = new URL(c.req.url);
  const headers = new Headers();
  const lastEventId = c.req.header('last-event-id');
  if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
  const response = await run.fetch(new Request(`https://run/events${url.search}`, { headers }));
  if (response.status === 404) throw new ApiError(404, `no run ${JSON.stringify(c.req.param('id'))}`);
  // A stream read with a key ends when the key is revoked, as its next request would be refused.
  const key = bearerToken(c.req.raw);
  if (c.get('principal').kind !== 'key' || response.body === null || key === null) return response;
  return new Response(endWhenRevoked(response.body, c.env.RUNVIL_DB, key), response);
});

runRoutes.post('/runs/:id/asks/:ask_id', async (c) => {
  const runId = c.req.param('id');
  const askId = c.req.param('ask_id');
  // The credential first, in the Worker: a caller without one learns nothing and costs no object call.
  const credential = await answerCredential(c.req.raw, c.env, runId, askId);
  // A key answers the asks of its prompts' runs (asks:answer:<prompt>); an ask's own token, its ask.
  if (credential.kind === 'key' && !allows(credential.principal, 'asks:answer:*'))
    checkScope(credential.principal, `asks:answer:${await promptOfRun(c.env, runId)}`);
  const wait = waitSeconds(c.req.query('wait'));
  checkJsonContentType(c.req.raw);
  const body = parseJsonObject(await readText(c.req.raw));
  onlyKeys(body, ['answer', 'answered_by']);
  // A text, or for an ask with a form the object that fills it (the run object checks which the ask takes, and the form).
  const isObject = body.answer !== null && typeof body.answer === 'object' && !Array.isArray(body.answer);
  if (typeof body.answer !== 'string' && !isObject)
    throw new ApiError(400, "`answer` must be a string, the operator's answer text, or for an ask with a form a JSON object of its fields", {
      field: 'answer',
    });
  const answeredBy = answeredByOf(body.answered_by);
  // One call: the object answers once the ask's index rows are written (the ask is out of
  // GET /asks?status=pending before this response is sent) and the run has suspended again
  // or ended, or at `wait`.
  const outcome = await runObject(c.env, runId).answer(askId, body.answer!, answeredBy, { waitMs: wait * 1000 });
  if (!outcome.ok) throw refused(outcome, runId);
  if (credential.kind === 'api' || (credential.kind === 'key' && allows(credential.principal, 'runs:read')))
    return c.json(await publicView(c.env, outcome.view));
  // The holder of one ask's token (or a key that may not read runs) sees that ask and the run's status: no other ask, no result.
  return c.json(await askTokenResponse(c.env, outcome.ask, outcome.view));
});

// Who may start runs of a prompt may cancel them (as an MCP caller cancels its task).
runRoutes.post('/runs/:id/cancel', requireScope(runPromptScope('runs:start')), async (c) => {
  const run = runObject(c.env, c.req.param('id'));
  checkJsonContentType(c.req.raw);
  const body = parseJsonObject(await readText(c.req.raw));
  onlyKeys(body, ['reason']);
  if (body.reason !== undefined && typeof body.reason !== 'string') throw new ApiError(400, '`reason` must be a string', { field: 'reason' });
  const outcome = await run.cancel(body.reason?.trim() || 'cancelled through the API');
  if (!outcome.ok) throw refused(outcome, c.req.param('id'));
  return c.json(await publicView(c.env, outcome.view));
});

runRoutes.get('/runs/:id/notifications', requireScope('runs:read'), async (c) => {
  const id = c.req.param('id');
  const notifications = await runObject(c.env, id).notifications();
  if (notifications === undefined) throw new ApiError(404, `no run ${JSON.stringify(id)}`);
  return c.json({
    notifications: notifications.map(({ webhook_id, event, url, state, attempts, last_status }) => ({ webhook_id, event, url, state, attempts, last_status })),
  });
});

runRoutes.get('/runs/:id/files/*', requireScope('runs:read'), async (c) => {
  const id = c.req.param('id');
  const run = runObject(c.env, id);
  // Decoded once, from the raw path (checked by checkPathEncoding): `%2F` in a name stays part of it.
  // ['', 'runs', id, 'files', ...the file path]: the id segment may itself be percent-encoded.
  const path = decodeURIComponent(rawPath(c.req.raw).split('/').slice(4).join('/'));
  if (path === '' || path.endsWith('/')) {
    const files = (await run.files(path)) ?? (await new KvRunStore(c.env.RUNVIL_KV, id).list(path));
    return c.json({ files });
  }
  let text = await run.file(path);
  if (text === undefined) text = await new KvRunStore(c.env.RUNVIL_KV, id).read(path);
  if (text === null || text === undefined) throw new ApiError(404, `run ${id} has no file ${JSON.stringify(path)}`);
  return c.text(text);
});

/** The `answered_by` of an answer: absent, or a string of at most MAX_ANSWERED_BY_CHARS characters. */
function answeredByOf(value: Json | undefined): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string')
    throw new ApiError(400, '`answered_by` must be a string: who answers (a name, an email, a chat handle)', { field: 'answered_by' });
  const chars = [...value].length;
  if (chars > MAX_ANSWERED_BY_CHARS)
    throw new ApiError(400, `\`answered_by\` is ${chars} characters long; it takes at most ${MAX_ANSWERED_BY_CHARS}`, { field: 'answered_by' });
  return value;
}
