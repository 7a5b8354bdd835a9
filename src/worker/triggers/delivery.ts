/**
 * A delivery to a trigger of runvil.yaml (DESIGN.md Part 3, "Triggers"): the trigger's
 * secret is read from the environment, the body (bounded as every body) is checked by its
 * sender's scheme, an event the trigger's `events:` leaves out starts nothing, the args are
 * taken from the payload by the trigger's paths, and the run is started under an id derived
 * from the trigger and the delivery's id, so a redelivery reaches the run the first started.
 * Every value taken from the payload enters the run as untrusted.
 */
import { resolveConfigValue, type Trigger, type TriggerSender } from '../../config/deployment-config.ts';
import { compileArgPath, readArgPath, type ArgPath } from '../../config/trigger-paths.ts';
import type { Json } from '../../json/json.ts';
import { readText } from '../http/body.ts';
import { textVars, type Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { checkDedupeKey, triggerRunId } from '../run-object/run-ids.ts';
import { startRun } from '../run-object/start-run.ts';
import type { ObjectView } from '../run-object/run-view.ts';
import { receiveGithub } from './github.ts';
import type { ReceiveDelivery } from './sender.ts';
import { receiveSlack } from './slack.ts';
import { receiveStandard } from './standard.ts';
import { receiveStripe } from './stripe.ts';

/** Each sender's scheme. */
const RECEIVERS: { readonly [sender in TriggerSender]: ReceiveDelivery } = {
  github: receiveGithub,
  stripe: receiveStripe,
  slack: receiveSlack,
  standard: receiveStandard,
};

/** What a delivery came to. */
export type DeliveryOutcome =
  { kind: 'started'; created: boolean; view: ObjectView } | { kind: 'ignored'; event: string | null } | { kind: 'challenge'; challenge: string };

/** The environment variables a trigger's secret is read from (`${NAME}`). */
export function secretVariables(trigger: Trigger): string[] {
  return [...trigger.secret.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1]!);
}

/** The trigger's secret, or null when a variable it is read from is not set (or empty). */
export function triggerSecret(env: Env, trigger: Trigger): string | null {
  const resolved = resolveConfigValue(trigger.secret, textVars(env));
  return resolved.ok && resolved.value !== '' ? resolved.value : null;
}

/** Handles a delivery to `trigger`; `waitMs` as `?wait=` gives it. */
export async function deliver(env: Env, trigger: Trigger, request: Request, waitMs: number): Promise<DeliveryOutcome> {
  const secret = triggerSecret(env, trigger);
  if (secret === null) {
    // 503: the deployment is not ready for this trigger; senders retry, and succeed once the secret is set.
    const names = secretVariables(trigger).join(', ') || 'its secret';
    throw new ApiError(
      503,
      `trigger ${JSON.stringify(trigger.name)} cannot check deliveries: set ${names} in the Worker's environment (wrangler secret put, or .dev.vars locally)`,
    );
  }
  const body = await readText(request);
  const received = await RECEIVERS[trigger.from](secret, request.headers, body, Math.floor(Date.now() / 1000));
  if (received.kind === 'unsigned') throw new ApiError(401, received.message);
  if (received.kind === 'challenge') return received;
  if (!eventIncluded(trigger.events, received.event)) return { kind: 'ignored', event: received.event };
  checkDedupeKey(received.id, received.idSource);
  const { args, taken } = argsOf(trigger, received.payload);
  const started = await startRun(env, {
    prompt: trigger.prompt,
    args,
    id: triggerRunId(env, trigger.name, received.id),
    webhook_id: received.id,
    untrustedArgs: taken,
    waitMs,
  });
  return { kind: 'started', ...started };
}

/**
 * Whether `events:` lets `event` start a run: an entry matches the event's name or any name
 * it is a dotted prefix of (`issues` matches `issues.opened`); with no filter every event does.
 */
export function eventIncluded(events: readonly string[] | null, event: string | null): boolean {
  if (events === null) return true;
  if (event === null) return false;
  return events.some((entry) => event === entry || event.startsWith(`${entry}.`));
}

/** The args a payload gives, and the names of those it gave (each untrusted). */
function argsOf(trigger: Trigger, payload: { [key: string]: Json }): { args: { [name: string]: Json }; taken: string[] } {
  if (trigger.args === null) return { args: { payload }, taken: ['payload'] };
  const args: { [name: string]: Json } = Object.create(null);
  const taken: string[] = [];
  for (const arg of trigger.args) {
    const value = readArgPath(compiledPath(arg.path), payload);
    // null counts as nothing found: GitHub sends `"body": null` for an issue with no text,
    // which would otherwise refuse every such delivery to a string arg with a default.
    if (value === undefined || value === null) continue;
    args[arg.name] = value;
    taken.push(arg.name);
  }
  return { args, taken };
}

// A trigger's paths were compiled when runvil.yaml was checked; here they are compiled once per isolate.
const compiled = new Map<string, ArgPath>();

function compiledPath(text: string): ArgPath {
  let path = compiled.get(text);
  if (path === undefined) {
    const outcome = compileArgPath(text);
    // The configuration's check refused a bad path; one here is a configuration not read from a checked file.
    if (!outcome.ok) throw new Error(outcome.message);
    compiled.set(text, (path = outcome.path));
  }
  return path;
}
