/**
 * `GET /triggers` (API token): the triggers of runvil.yaml, each with its route's name, the
 * prompt it starts, its sender, its event filter, its args' paths, the environment
 * variables its secret is read from and whether they are set; never a secret's value.
 */
import { Hono } from 'hono';
import { requireScope } from '../http/auth.ts';
import { deploymentConfig } from '../deployment/deployment.ts';
import type { Env } from '../env.ts';
import { secretVariables, triggerSecret } from '../triggers/delivery.ts';

/** The triggers route. */
export const triggerRoutes = new Hono<{ Bindings: Env }>();

// The deployment's configuration (where its secrets are read from), not a run's data: admin.
triggerRoutes.get('/triggers', requireScope('admin'), (c) => {
  const triggers = [...deploymentConfig().triggers.values()].map((trigger) => ({
    name: trigger.name,
    url_path: `/hooks/${trigger.name}`,
    prompt: trigger.prompt,
    from: trigger.from,
    events: trigger.events,
    // Object.fromEntries defines each name, so an arg named __proto__ is listed like any other.
    args: trigger.args === null ? null : Object.fromEntries(trigger.args.map((arg) => [arg.name, arg.path])),
    secret_variables: secretVariables(trigger),
    secret_set: triggerSecret(c.env, trigger) !== null,
  }));
  return c.json({ triggers });
});
