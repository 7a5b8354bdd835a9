/**
 * Stripe deliveries, checked as Stripe documents its scheme: `Stripe-Signature` holds
 * `t=<seconds>` and one or more `v1=<hex>`, each possibly the HMAC-SHA256 of `{t}.{body}`
 * under the endpoint's secret (`whsec_...`, used as it is written); a `t` more than 5
 * minutes from now is refused (Stripe's own tolerance). Verified by WebCrypto, in constant
 * time, rather than by the `stripe` package: its worker build runs in workerd without
 * nodejs_compat, but brings the whole API client (about 725 KiB, a quarter more Worker)
 * for one HMAC. The tests sign with `stripe`'s own test-header helper, and check that this
 * verifier agrees with `stripe`'s.
 *
 * The event's id (`evt_...`, the same on every retry) names the run; its `type` is already
 * dotted (`payment_intent.succeeded`).
 */
import { anySignatureMatches, hmacKey, withinWindow } from './hmac.ts';
import { payloadOf, stringField, unsigned, type Received } from './sender.ts';

/** Stripe's tolerance for `t`, in seconds. */
export const STRIPE_TOLERANCE_SECONDS = 5 * 60;

/** The most `v1` entries read (Stripe sends two while a secret is rolled). */
const MAX_SIGNATURES = 5;

/** Checks and reads a Stripe delivery. */
export async function receiveStripe(secret: string, headers: Headers, body: string, nowSeconds: number): Promise<Received> {
  const header = headers.get('stripe-signature');
  if (header === null) return unsigned('a Stripe delivery needs the Stripe-Signature header');
  let timestamp: string | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    const [key, value] = at < 0 ? [item, ''] : [item.slice(0, at).trim(), item.slice(at + 1).trim()];
    if (key === 't') timestamp ??= value;
    else if (key === 'v1') signatures.push(value);
  }
  if (timestamp === null || signatures.length === 0) return unsigned('Stripe-Signature must hold t= and v1=');
  if (signatures.length > MAX_SIGNATURES) return unsigned(`Stripe-Signature holds ${signatures.length} v1 signatures; at most ${MAX_SIGNATURES} are checked`);
  if (!withinWindow(timestamp, nowSeconds, STRIPE_TOLERANCE_SECONDS))
    return unsigned("Stripe-Signature's t= is more than 5 minutes away from now: the delivery is refused as a possible replay");
  if (!(await anySignatureMatches(await hmacKey(secret), signatures, `${timestamp}.${body}`)))
    return unsigned('no v1 signature of Stripe-Signature matches the delivery');
  const payload = payloadOf(new Headers(), body, 'Stripe');
  return { kind: 'delivery', id: stringField(payload.id) ?? '', idSource: "the Stripe event's id", event: stringField(payload.type), payload };
}
