/**
 * Comparing secrets without leaking where they differ: both sides are hashed with SHA-256
 * (WebCrypto), so the comparison always runs over 32 bytes whatever their lengths, and
 * every byte is compared.
 */

const encoder = new TextEncoder();

/** True when `given` equals `expected`, in time that does not depend on where they differ. */
export async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

/** A fresh unguessable token: 32 random bytes as hex. */
export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
