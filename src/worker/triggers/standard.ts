/**
 * Standard Webhooks deliveries to a trigger: the signature as today's `/hooks/:name` checks
 * it (../webhooks.ts: `webhook-id`, `webhook-timestamp`, `webhook-signature`, 5 minutes),
 * under the trigger's secret. `webhook-id` names the run; the event is the payload's
 * `type`, as the specification's payloads carry it (`invoice.paid`).
 */
import { verifyWebhook } from './webhooks.ts';
import { payloadOf, stringField, unsigned, type Received } from './sender.ts';

/** Checks and reads a Standard Webhooks delivery. */
export async function receiveStandard(secret: string, headers: Headers, body: string, nowSeconds: number): Promise<Received> {
  const check = await verifyWebhook(
    secret,
    { id: headers.get('webhook-id'), timestamp: headers.get('webhook-timestamp'), signature: headers.get('webhook-signature') },
    body,
    nowSeconds,
  );
  if (!check.ok) return unsigned(check.message);
  const payload = payloadOf(new Headers(), body, 'webhook');
  return { kind: 'delivery', id: check.id, idSource: 'webhook-id', event: stringField(payload.type), payload };
}
