/**
 * GitHub deliveries: `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the body under
 * the webhook's secret, checked with @octokit/webhooks-methods (GitHub's own, on WebCrypto,
 * whose verify compares in constant time). GitHub's scheme has no timestamp, so no replay
 * window: `X-GitHub-Delivery` (a GUID, the same on a redelivery) names the run, so a replay
 * reaches the run the first delivery started. The event is `X-GitHub-Event` and the
 * payload's `action` (`issues.opened`). A form delivery (content type
 * application/x-www-form-urlencoded) carries its JSON in the `payload` field.
 */
import { verify } from '@octokit/webhooks-methods';
import { eventHeader, eventName, payloadOf, unsigned, type Received } from './sender.ts';

const SIGNATURE = /^sha256=[0-9a-fA-F]{64}$/;

/** Checks and reads a GitHub delivery. */
export async function receiveGithub(secret: string, headers: Headers, body: string): Promise<Received> {
  const signature = headers.get('x-hub-signature-256');
  if (signature === null) return unsigned('a GitHub delivery needs the X-Hub-Signature-256 header: set a secret on the webhook in GitHub');
  // The library reads any hex pairs it finds; a header that is not exactly one signature is refused first.
  if (!SIGNATURE.test(signature)) return unsigned('X-Hub-Signature-256 must read sha256=<64 hex digits>');
  // The library refuses an empty payload with an exception; GitHub signs a body.
  if (body === '' || !(await verify(secret, body, signature))) return unsigned('X-Hub-Signature-256 does not match the delivery');
  const id = headers.get('x-github-delivery');
  if (id === null) return unsigned('a GitHub delivery needs the X-GitHub-Delivery header');
  const event = eventHeader(headers, 'X-GitHub-Event');
  const payload = payloadOf(headers, body, 'GitHub');
  return { kind: 'delivery', id, idSource: 'X-GitHub-Delivery', event: eventName(event, payload.action), payload };
}
