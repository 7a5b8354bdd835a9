/**
 * Comparing secrets without leaking where they differ, with WebCrypto's
 * `crypto.subtle.timingSafeEqual` (a Workers extension): every byte is compared whatever
 * the contents. It is synchronous, where hashing both sides first cost a few hundred
 * microseconds of every authenticated request.
 */
import { hexOf } from '../../json/digest.ts';

const encoder = new TextEncoder();

type TimingSafeSubtle = SubtleCrypto & { timingSafeEqual(a: ArrayBufferView, b: ArrayBufferView): boolean };

/** True when `given` equals `expected`, in time that does not depend on their contents. */
export function sameSecret(given: string, expected: string): boolean {
  const subtle = crypto.subtle as TimingSafeSubtle;
  const a = encoder.encode(given);
  const b = encoder.encode(expected);
  // timingSafeEqual takes equal lengths. On a mismatch `a` is compared with itself, so the
  // time still does not depend on the contents; only the length, which is no secret, shows.
  if (a.length !== b.length) return !subtle.timingSafeEqual(a, a);
  return subtle.timingSafeEqual(a, b);
}

/** A fresh unguessable token: 32 random bytes as hex. */
export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return hexOf(bytes);
}
