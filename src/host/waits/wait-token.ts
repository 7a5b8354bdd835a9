/**
 * The token of one wait: HMAC-SHA256(secret, kind's label + "\n" + run id + "\n" + wait id),
 * as hex. Whoever holds a wait's token may post its result, and nothing else's: the label
 * (WAIT_KINDS) keeps an ask's token from being a call's, the run id and the wait id name one
 * wait of one run. With WebCrypto, which Node and workerd both give; the Worker derives from
 * its deployment secret (src/worker/waits/ask-token.ts) and compares in constant time.
 */
import { hexOf } from '../../json/digest.ts';

const encoder = new TextEncoder();

/** The HMAC key of a secret, imported once and used for every token derived from it. */
export function waitTokenKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

/** The token of wait `id` of run `runId`, under `key`, for the purpose `label` names (a kind's `tokenLabel`). */
export async function waitToken(key: CryptoKey, label: string, runId: string, id: string): Promise<string> {
  // A run id holds no newline, so the message names one (run, id) pair.
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(`${label}\n${runId}\n${id}`));
  return hexOf(new Uint8Array(mac));
}

/** True for a text shaped like a wait token (64 hex digits): the cheap check before any is derived. */
export const isTokenShaped = (text: string): boolean => /^[0-9a-f]{64}$/.test(text);
