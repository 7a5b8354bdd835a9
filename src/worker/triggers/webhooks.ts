/**
 * Webhook signatures as the Standard Webhooks specification gives them: the signed content
 * is `{webhook-id}.{webhook-timestamp}.{body}`, signed with HMAC-SHA256 under the secret's
 * key (the base64 after `whsec_`); `webhook-signature` holds space-separated `v1,{base64}`
 * signatures, any one of which may match; a timestamp more than 5 minutes away from now is
 * refused, against replays. The comparison is WebCrypto's own HMAC verify, which is
 * constant-time.
 *
 * An entry is exactly `v1,` and a base64 signature of 32 bytes: an entry of another version,
 * with a second comma or with anything after the signature is no signature (never read up
 * to its second comma). At most MAX_SIGNATURES entries are read, so a header of a thousand
 * costs no thousand verifications: more is refused.
 *
 * Each prompt has its own secret, from the Worker's environment (never from the prompt
 * file): `RUNVIL_WEBHOOK_SECRET_<NAME>`, the prompt name in upper case with `-` as `_`.
 */

/** How far a webhook's timestamp may be from now. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** The most entries a `webhook-signature` header may hold (a sender rotating secrets sends two or three). */
export const MAX_SIGNATURES = 5;

/** One `v1` signature: HMAC-SHA256 is 32 bytes, 44 characters of padded base64. */
const V1_ENTRY = /^v1,([A-Za-z0-9+/]{43}=)$/;

/** The environment variable holding the webhook secret of a prompt. */
export function webhookSecretName(prompt: string): string {
  return `RUNVIL_WEBHOOK_SECRET_${prompt.toUpperCase().replaceAll('-', '_')}`;
}

/** The three headers of a delivery. */
export interface WebhookHeaders {
  id: string | null;
  timestamp: string | null;
  signature: string | null;
}

/** The delivery's id when the signature holds, or why it does not. */
export type WebhookCheck = { ok: true; id: string } | { ok: false; message: string };

/** The headers of a request. */
export function webhookHeaders(request: Request): WebhookHeaders {
  return {
    id: request.headers.get('webhook-id'),
    timestamp: request.headers.get('webhook-timestamp'),
    signature: request.headers.get('webhook-signature'),
  };
}

/** Verifies a delivery against `secret` at `nowSeconds`. */
export async function verifyWebhook(secret: string, headers: WebhookHeaders, body: string, nowSeconds: number): Promise<WebhookCheck> {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) {
    return { ok: false, message: 'a webhook needs the webhook-id, webhook-timestamp and webhook-signature headers (Standard Webhooks)' };
  }
  if (!/^[0-9]{1,15}$/.test(timestamp)) return { ok: false, message: 'webhook-timestamp must be whole seconds since the epoch' };
  if (Math.abs(nowSeconds - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) {
    return { ok: false, message: 'webhook-timestamp is more than 5 minutes away from now: the delivery is refused as a possible replay' };
  }
  const key = await hmacKey(secret);
  if (!key) return { ok: false, message: "the prompt's webhook secret is not a `whsec_` base64 secret; fix the Worker's environment" };
  const entries = signature.split(' ').filter((entry) => entry !== '');
  if (entries.length > MAX_SIGNATURES) {
    return { ok: false, message: `webhook-signature holds ${entries.length} signatures; at most ${MAX_SIGNATURES} are checked` };
  }
  const content = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  for (const entry of entries) {
    const match = V1_ENTRY.exec(entry);
    if (!match) continue;
    const bytes = base64Bytes(match[1]!);
    if (bytes && (await crypto.subtle.verify('HMAC', key, bytes, content))) return { ok: true, id };
  }
  return { ok: false, message: 'no webhook-signature matches the delivery' };
}

async function hmacKey(secret: string): Promise<CryptoKey | null> {
  const bytes = base64Bytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (!bytes || bytes.length === 0) return null;
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
