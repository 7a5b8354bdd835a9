/**
 * `POST /runs/:id/tool-results/:call_id`: an HTTP tool service delivers the result of a call
 * it answered 202 (DESIGN.md Part 2, "HTTP tool services"), with the call's own callback
 * token (call-token.ts) or the API token. The credential is checked here, before the run
 * object is called; the response says the result was accepted and nothing about the run.
 * A body past 1 MiB (body.ts) is refused with 413, and ends the call as `oversized`.
 */
import { Hono } from 'hono';
import { toolResultOf } from '../../host/tool-calls.ts';
import { checkScope, credentialOf } from '../http/auth.ts';
import { askSecret } from '../waits/ask-token.ts';
import { checkJsonContentType, parseJsonObject, readText } from '../http/body.ts';
import { isCallToken } from '../waits/call-token.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { runObject } from '../run-object/run-ids.ts';
import { refused } from './refused.ts';

/** The tool-result route. */
export const toolResultRoutes = new Hono<{ Bindings: Env }>();

toolResultRoutes.post('/runs/:id/tool-results/:call_id', async (c) => {
  const runId = c.req.param('id');
  const callId = c.req.param('call_id');
  const credential = await credentialOf(c.req.raw, c.env);
  // A key delivers a service's result only with admin: services hold their call's own token.
  if (credential.kind === 'key') checkScope(credential.principal, 'admin');
  else if (credential.kind !== 'api') {
    if (askSecret(c.env) === null)
      throw new ApiError(401, 'the server has no RUNVIL_API_TOKEN (or RUNVIL_ASK_SECRET) configured, so it cannot check callback tokens');
    if (!(await isCallToken(c.env, runId, callId, credential.token))) {
      throw new ApiError(401, "wrong token: send the callback_token of this tool call (it delivers that call's result only), or the API token");
    }
  }
  checkJsonContentType(c.req.raw);
  let text: string;
  try {
    text = await readText(c.req.raw);
  } catch (error) {
    // A result past the cap on a body was cut off as it came: the call ends the run with Limit
    // (tool-output-cap.ts) rather than wait for its deadline; the service hears 413.
    if (error instanceof ApiError && error.status === 413) await runObject(c.env, runId).toolResult(callId, { oversized: true });
    throw error;
  }
  const parsed = toolResultOf(parseJsonObject(text));
  if (!parsed.ok) throw new ApiError(400, parsed.message, parsed.field !== undefined ? { field: parsed.field } : {});
  const result = parsed.result;
  const outcome = await runObject(c.env, runId).toolResult(callId, result);
  if (!outcome.ok) throw refused(outcome, runId);
  return c.json({ accepted: true });
});
