/**
 * Slack deliveries, checked as Slack's "Verifying requests from Slack" says: `X-Slack-Signature`
 * is `v0=` and the hex HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{body}` under the
 * app's signing secret; a timestamp more than 5 minutes from now is refused. Slack's own
 * verifier lives in @slack/bolt, a Node framework (Express receivers, Node's crypto) that
 * does not run in the Worker; the scheme is one HMAC, verified here by WebCrypto in
 * constant time, and the tests sign as Slack's documentation shows.
 *
 * Bodies are JSON (the Events API) or url-encoded forms: an interactive message's JSON is
 * the form's `payload` field; a slash command's form is its fields. The delivery id is the
 * timestamp and the body's SHA-256 (DESIGN.md Part 3). The event is the payload's `type`,
 * and for an Events API callback its event's type too (`event_callback.app_mention`).
 * A signed `url_verification` is answered with its challenge, as Slack needs to register
 * the URL.
 */
import { hexOf, sha256 } from '../../json/digest.ts';
import { anySignatureMatches, hmacKey, withinWindow } from './hmac.ts';
import { eventName, payloadOf, stringField, unsigned, type Received } from './sender.ts';

/** Slack's window for X-Slack-Request-Timestamp, in seconds. */
export const SLACK_TOLERANCE_SECONDS = 5 * 60;

/** Checks and reads a Slack delivery. */
export async function receiveSlack(secret: string, headers: Headers, body: string, nowSeconds: number): Promise<Received> {
  const signature = headers.get('x-slack-signature');
  const timestamp = headers.get('x-slack-request-timestamp');
  if (signature === null || timestamp === null) return unsigned('a Slack delivery needs the X-Slack-Signature and X-Slack-Request-Timestamp headers');
  if (!withinWindow(timestamp, nowSeconds, SLACK_TOLERANCE_SECONDS))
    return unsigned('X-Slack-Request-Timestamp is more than 5 minutes away from now: the delivery is refused as a possible replay');
  if (!signature.startsWith('v0=') || !(await anySignatureMatches(await hmacKey(secret), [signature.slice(3)], `v0:${timestamp}:${body}`)))
    return unsigned('X-Slack-Signature does not match the delivery');
  const payload = payloadOf(headers, body, 'Slack');
  const type = stringField(payload.type);
  if (type === 'url_verification') return { kind: 'challenge', challenge: stringField(payload.challenge) ?? '' };
  const event = payload.event;
  const sub = type === 'event_callback' && event !== null && typeof event === 'object' && !Array.isArray(event) ? event.type : undefined;
  return {
    kind: 'delivery',
    id: `${timestamp}.${hexOf(await sha256(body))}`,
    idSource: 'X-Slack-Request-Timestamp',
    event: type === null ? null : eventName(type, sub),
    payload,
  };
}
