/**
 * HMAC-SHA256 as the senders sign with it: a key from the secret's UTF-8 text, and a
 * signature given as hex, checked by WebCrypto's own `verify`, which compares in constant
 * time. A signature that is not exactly 64 hex digits is no signature (never read leniently
 * as "the hex pairs found in it").
 */

const encoder = new TextEncoder();

/** The HMAC-SHA256 key of a secret's text. */
export function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

/** The 32 bytes of a hex HMAC-SHA256 signature, or null when `text` is not 64 hex digits. */
export function signatureBytes(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-fA-F]{64}$/.test(text)) return null;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** True when one of `signatures` (hex) is the HMAC of `content` under `key`. */
export async function anySignatureMatches(key: CryptoKey, signatures: readonly string[], content: string): Promise<boolean> {
  const data = encoder.encode(content);
  for (const signature of signatures) {
    const bytes = signatureBytes(signature);
    if (bytes && (await crypto.subtle.verify('HMAC', key, bytes, data))) return true;
  }
  return false;
}

/** Whether `timestamp` (whole seconds, as text) is within `toleranceSeconds` of `nowSeconds`, either way. */
export function withinWindow(timestamp: string, nowSeconds: number, toleranceSeconds: number): boolean {
  return /^[0-9]{1,15}$/.test(timestamp) && Math.abs(nowSeconds - Number(timestamp)) <= toleranceSeconds;
}
