/**
 * `POST /hooks/:name`: a webhook starts a run of the prompt, its JSON body as the run's
 * args. The delivery is verified as Standard Webhooks says (webhooks.ts) with the
 * prompt's own secret; its `webhook-id` names the run, so a redelivery starts nothing
 * and answers the run the first delivery started.
 */
import { Hono } from 'hono';
import { checkJsonContentType, parseJsonObject, readText } from '../body.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http-error.ts';
import { checkPromptName } from '../prompt-library.ts';
import { checkDedupeKey, webhookRunId } from '../run-ids.ts';
import { startRun } from '../start-run.ts';
import { verifyWebhook, webhookHeaders, webhookSecretName } from '../webhooks.ts';

/** The webhook route. */
export const hookRoutes = new Hono<{ Bindings: Env }>();

hookRoutes.post('/hooks/:name', async (c) => {
  const name = c.req.param('name');
  checkPromptName(name);
  // An own variable only: a name the Worker's environment merely inherits is no secret.
  const secretName = webhookSecretName(name);
  const secret = Object.hasOwn(c.env, secretName) ? c.env[secretName] : undefined;
  if (typeof secret !== 'string' || secret === '') {
    throw new ApiError(403, `webhooks are not enabled for prompt ${JSON.stringify(name)}: set ${webhookSecretName(name)} in the Worker's environment`);
  }
  const body = await readText(c.req.raw);
  const check = await verifyWebhook(secret, webhookHeaders(c.req.raw), body, Math.floor(Date.now() / 1000));
  if (!check.ok) throw new ApiError(401, check.message);
  checkDedupeKey(check.id, 'webhook-id');
  checkJsonContentType(c.req.raw);
  const args = parseJsonObject(body, "the webhook body (the run's args)");
  const started = await startRun(c.env, {
    prompt: name,
    args,
    id: webhookRunId(c.env, name, check.id),
    webhook_id: check.id,
  });
  return c.json({ run_id: started.view.run_id, status: started.view.status, duplicate: !started.created }, started.created ? 202 : 200);
});
