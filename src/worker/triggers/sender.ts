/**
 * What every sender's module gives the delivery route: a delivery whose signature holds
 * (its id, its event's name and its payload), a Slack URL check to answer, or a refusal
 * (401) saying what was wrong with the signature. A payload that is no JSON object is a 400
 * raised here, after the signature held.
 */
import type { Json } from '../../json/json.ts';
import { parseJsonObject } from '../http/body.ts';
import { ApiError } from '../http/http-error.ts';

/** A verified delivery. */
export interface Delivery {
  kind: 'delivery';
  /** The sender's id of the delivery: the same on a redelivery. */
  id: string;
  /** Where the id comes from, for the message of a malformed one (`X-GitHub-Delivery`). */
  idSource: string;
  /** The event's name as the `events:` filter reads it (`issues.opened`), or null when it has none. */
  event: string | null;
  payload: { [key: string]: Json };
}

/** Slack's `url_verification`: signed, and answered with its challenge to register the URL. */
export interface UrlChallenge {
  kind: 'challenge';
  challenge: string;
}

/** A delivery whose signature does not hold. */
export interface Unsigned {
  kind: 'unsigned';
  message: string;
}

/** What a sender's module makes of a request. */
export type Received = Delivery | UrlChallenge | Unsigned;

/** A sender's signature scheme and payload format. */
export type ReceiveDelivery = (secret: string, headers: Headers, body: string, nowSeconds: number) => Promise<Received>;

/** The longest event name a header may give (GitHub's are under 40 characters). */
const MAX_EVENT_CHARS = 100;

/** A refusal of the signature. */
export const unsigned = (message: string): Unsigned => ({ kind: 'unsigned', message });

/**
 * The payload of a verified body: JSON, or (GitHub's and Slack's form deliveries) a
 * url-encoded form whose `payload` field holds the JSON; a form without one is its fields.
 */
export function payloadOf(headers: Headers, body: string, sender: string): { [key: string]: Json } {
  const type = (headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return parseJsonObject(body, `the ${sender} payload`);
  const form = new URLSearchParams(body);
  const field = form.get('payload');
  if (field !== null) return parseJsonObject(field, `the ${sender} form's \`payload\` field`);
  // Object.fromEntries defines each field, so a field named __proto__ is a field like any other.
  return Object.fromEntries(form.entries());
}

/** The text of a string field of the payload, or null. */
export function stringField(value: Json | undefined): string | null {
  return typeof value === 'string' ? value : null;
}

/** An event name as a header gives it: 400 when it is no short word (`issues`, `pull_request`). */
export function eventHeader(headers: Headers, header: string): string {
  const value = headers.get(header);
  if (value === null || value === '') throw new ApiError(400, `the delivery has no ${header} header, which names its event`, { field: header });
  if (value.length > MAX_EVENT_CHARS || !/^[A-Za-z0-9_.-]+$/.test(value))
    throw new ApiError(400, `${header} must be an event name (letters, digits, _ . -; at most ${MAX_EVENT_CHARS})`, { field: header });
  return value;
}

/** `name` joined with a sub-name from the payload (`issues` + `opened`), when the payload has one. */
export function eventName(name: string, sub: Json | undefined): string {
  return typeof sub === 'string' && sub !== '' ? `${name}.${sub}` : name;
}
