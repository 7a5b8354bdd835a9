/**
 * Digests of text: the fast FNV-1a fingerprint a replay compares, and SHA-256 for ids and
 * seeds derived from a run's id or seed. Platform-neutral (WebCrypto is part of the web
 * platform both Node and workerd implement).
 */

/**
 * A 64-bit FNV-1a digest of a text, in hex: a fingerprint for noticing a replay that asks for
 * something else, not a defence against anyone forging one. Several parts digest as their
 * concatenation would, without making it.
 */
export function digestText(...parts: string[]): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let p = 0; p < parts.length; p++) {
    const text = parts[p]!;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x01000193) ^ (a >>> 7);
    }
  }
  return hex32(a) + hex32(b);
}

// A replay digests every round: by table, the hex takes a third of the time toString(16) and padStart do.
const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** A 32-bit value as 8 lower-case hex digits. */
function hex32(value: number): string {
  return HEX_BYTES[value >>> 24]! + HEX_BYTES[(value >>> 16) & 0xff]! + HEX_BYTES[(value >>> 8) & 0xff]! + HEX_BYTES[value & 0xff]!;
}

/** Bytes as lower-case hex, two digits a byte. */
export function hexOf(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i++) text += HEX_BYTES[bytes[i]!]!;
  return text;
}

/** The SHA-256 digest of a text's UTF-8 bytes. */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}
