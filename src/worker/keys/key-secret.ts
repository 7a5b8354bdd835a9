/**
 * A key's text and its digest. A key is `rvk_` and 43 characters of base64url (32 random
 * bytes), so it is recognisable in a log or a secret scanner; D1 keeps only its SHA-256
 * digest, so a leak of the database gives nobody a key. A lookup is by digest: the text is
 * never compared, so there is no comparison whose timing says how much of a guess was right.
 */
import { hexOf } from '../../json/digest.ts';

/** What every key's text starts with. */
export const KEY_PREFIX = 'rvk_';

const KEY_SHAPE = /^rvk_[A-Za-z0-9_-]{43}$/;
const encoder = new TextEncoder();

/** A new key's text. */
export function newKeyText(): string {
  return KEY_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** A new key's id: public (listed, used to revoke), never a credential. */
export function newKeyId(): string {
  return `key_${hexOf(crypto.getRandomValues(new Uint8Array(12)))}`;
}

/** Whether a bearer token has the shape of a key (a cheap refusal before any lookup). */
export function looksLikeKey(token: string): boolean {
  return KEY_SHAPE.test(token);
}

/** The digest D1 keeps of a key: SHA-256 of its text, as hex. */
export async function keyDigest(key: string): Promise<string> {
  return hexOf(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(key))));
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
