/**
 * The triggers the workerd trigger tests serve (a DeploymentConfig built here, as the
 * tests' runvil.yaml would give it), their secrets, the prompts they start, and deliveries
 * signed as each sender signs: GitHub with @octokit/webhooks-methods, Stripe with the
 * `stripe` package's test-header helper, Slack as its documentation shows, Standard
 * Webhooks with the standardwebhooks package.
 */
import { sign as signGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import type { DeploymentConfig, Trigger } from '../../../src/config/deployment-config.ts';
import type { Env } from '../../../src/worker/env.ts';
import app from './test-worker.ts';
import { testEnv } from './client.ts';

export const GITHUB_SECRET = 'It is a secret to everybody';
export const STRIPE_SECRET = 'whsec_test_secret_of_the_stripe_endpoint';
export const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
export const STANDARD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** The Worker's environment with the triggers' secrets set (UNSET_SECRET is not). */
export const triggerEnv: Env = {
  ...testEnv,
  GITHUB_WEBHOOK_SECRET: GITHUB_SECRET,
  STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
  SLACK_SIGNING_SECRET: SLACK_SECRET,
  STANDARD_SECRET,
};

/** Reads an issue's title, body and repository, each required but the body. */
export const TRIAGE = `---
name: triage
description: Triage an issue a trigger took from GitHub.
runvil: 0
args:
  title: { type: string }
  body: { type: string, default: '(no body)' }
  repo: { type: string, default: unknown }
---
# Triage

## Read
\`\`\`lua
return args.title .. '|' .. args.body .. '|' .. args.repo
\`\`\`
`;

/** Reads the whole payload as its single arg. */
export const HOOKED = `---
name: hooked
description: A payload, whole.
runvil: 0
args:
  payload: { type: json }
---
# Hooked

## Read
\`\`\`lua
return json.encode(args.payload)
\`\`\`
`;

/** Reads a Stripe payment's id and amount. */
export const PAYMENT = `---
name: payment
description: A payment Stripe reported.
runvil: 0
args:
  intent: { type: string }
  amount: { type: integer, default: 0 }
---
# Payment

## Read
\`\`\`lua
return args.intent .. '|' .. args.amount
\`\`\`
`;

const trigger = (fields: Omit<Trigger, 'line' | 'column' | 'events' | 'args'> & Partial<Trigger>): Trigger => ({
  events: null,
  args: null,
  line: 1,
  column: 1,
  ...fields,
});

const triggers: Trigger[] = [
  trigger({
    name: 'gh-issues',
    prompt: 'triage',
    from: 'github',
    secret: '${GITHUB_WEBHOOK_SECRET}',
    events: ['issues.opened', 'issues.edited'],
    args: [
      { name: 'title', path: '$.issue.title' },
      { name: 'body', path: '$.issue.body' },
      { name: 'repo', path: '$.repository.full_name' },
    ],
  }),
  trigger({ name: 'gh-all', prompt: 'hooked', from: 'github', secret: '${GITHUB_WEBHOOK_SECRET}' }),
  trigger({
    name: 'stripe-payments',
    prompt: 'payment',
    from: 'stripe',
    secret: '${STRIPE_WEBHOOK_SECRET}',
    events: ['payment_intent'],
    args: [
      { name: 'intent', path: '$.data.object.id' },
      { name: 'amount', path: '$.data.object.amount' },
    ],
  }),
  trigger({
    name: 'slack-actions',
    prompt: 'hooked',
    from: 'slack',
    secret: '${SLACK_SIGNING_SECRET}',
    events: ['block_actions', 'event_callback.app_mention'],
  }),
  trigger({ name: 'std-invoices', prompt: 'hooked', from: 'standard', secret: '${STANDARD_SECRET}', events: ['invoice.paid'] }),
  trigger({ name: 'unset', prompt: 'hooked', from: 'github', secret: '${UNSET_WEBHOOK_SECRET}' }),
];

/** The configuration the tests serve. */
export const TRIGGER_CONFIG: DeploymentConfig = {
  publicUrl: null,
  packs: new Map(),
  notify: [],
  triggers: new Map(triggers.map((t) => [t.name, t])),
};

/** A delivery to `/hooks/<name>` (with `query`), through the app with the triggers' secrets. */
export async function deliver(name: string, body: string, headers: Record<string, string>, query = ''): Promise<Response> {
  return await app.fetch(new Request(`https://runvil.test/hooks/${name}${query}`, { method: 'POST', headers, body }), triggerEnv);
}

/** A GitHub delivery's headers, signed by @octokit/webhooks-methods. */
export async function githubHeaders(event: string, delivery: string, body: string, secret = GITHUB_SECRET): Promise<Record<string, string>> {
  return {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': delivery,
    'x-hub-signature-256': await signGithub(secret, body),
  };
}

const stripe = new Stripe('sk_test_none');

/** A Stripe delivery's headers, signed by the stripe package's test-header helper. */
export async function stripeHeaders(body: string, { secret = STRIPE_SECRET, at = Math.floor(Date.now() / 1000) } = {}): Promise<Record<string, string>> {
  const header = await stripe.webhooks.generateTestHeaderStringAsync({ payload: body, secret, timestamp: at });
  return { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header };
}

/** Slack's signature as its documentation computes it: `v0=` hex HMAC-SHA256 of `v0:{timestamp}:{body}`. */
export async function slackHeaders(
  body: string,
  { secret = SLACK_SECRET, at = Math.floor(Date.now() / 1000), type = 'application/x-www-form-urlencoded' } = {},
): Promise<Record<string, string>> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`v0:${at}:${body}`)));
  const hex = [...mac].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return { 'content-type': type, 'x-slack-request-timestamp': String(at), 'x-slack-signature': `v0=${hex}` };
}

/** A Standard Webhooks delivery's headers, signed by the standardwebhooks package. */
export function standardHeaders(id: string, body: string, at = new Date()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(STANDARD_SECRET).sign(id, at, body),
  };
}

/** An issue event's payload. */
export function issuePayload(action: string, title: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    action,
    issue: { number: 7, title, body: 'It breaks.', user: { login: 'octocat' } },
    repository: { full_name: 'acme/app' },
    ...extra,
  });
}

/** A payment_intent event's payload. */
export function paymentEvent(id: string, type = 'payment_intent.succeeded', amount = 2000): string {
  return JSON.stringify({ id, object: 'event', type, data: { object: { id: 'pi_123', object: 'payment_intent', amount } } });
}
