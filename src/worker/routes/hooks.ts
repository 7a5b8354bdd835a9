/**
 * `POST /hooks/:name`. A trigger of runvil.yaml by that name takes the delivery as its
 * sender signs it (triggers/delivery.ts). Otherwise a webhook starts a run of the prompt
 * of that name, its JSON body as the run's args, verified as Standard Webhooks says
 * (webhooks.ts) with the prompt's own secret; its `webhook-id` names the run, so a
 * redelivery starts nothing and answers the run the first delivery started.
 * `?wait=SECONDS` waits for the run as `POST /prompts/:name/runs` does, and `?stream=1` answers
 * with its event stream (streamed-run.ts).
 */
import { Hono, type Context } from 'hono';
import { publicView } from '../waits/ask-view.ts';
import { checkJsonContentType, parseJsonObject, readText } from '../http/body.ts';
import { deploymentConfig } from '../deployment/deployment.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { checkPromptName } from '../deployment/prompt-library.ts';
import { checkDedupeKey, webhookRunId } from '../run-object/run-ids.ts';
import type { ObjectView } from '../run-object/run-view.ts';
import { startRun } from '../run-object/start-run.ts';
import { deliver } from '../triggers/delivery.ts';
import { waitSeconds } from '../http/wait-param.ts';
import { streamedRun, wantsStream } from './streamed-run.ts';
import { verifyWebhook, webhookHeaders, webhookSecretName } from '../triggers/webhooks.ts';

/** The webhook route. */
export const hookRoutes = new Hono<{ Bindings: Env }>();

hookRoutes.post('/hooks/:name', async (c) => {
  const name = c.req.param('name');
  const wait = waitSeconds(c.req.query('wait'));
  const stream = wantsStream(c);
  const trigger = deploymentConfig().triggers.get(name);
  if (trigger !== undefined) {
    const outcome = await deliver(c.env, trigger, c.req.raw, wait * 1000);
    if (outcome.kind === 'challenge') return c.json({ challenge: outcome.challenge });
    // 2xx: a sender retries a delivery that got an error, and this one is settled.
    if (outcome.kind === 'ignored') return c.json({ ignored: true }, 202);
    return stream ? streamedRun(c, outcome.view.run_id) : startedResponse(c, outcome, wait);
  }
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
    waitMs: wait * 1000,
  });
  return stream ? streamedRun(c, started.view.run_id) : startedResponse(c, started, wait);
});

/**
 * The answer to a delivery that reached a run: 202 and the run's id for a new run, 200 for a
 * redelivery (`duplicate`); with `?wait=`, the run's view as `POST /prompts/:name/runs` gives it.
 */
async function startedResponse(c: Context<{ Bindings: Env }>, started: { created: boolean; view: ObjectView }, wait: number): Promise<Response> {
  const duplicate = !started.created;
  const status = duplicate ? 200 : wait === 0 || started.view.status === 'running' ? 202 : 200;
  if (wait === 0) return c.json({ run_id: started.view.run_id, status: started.view.status, duplicate }, status);
  return c.json({ ...(await publicView(c.env, started.view)), duplicate }, status);
}
