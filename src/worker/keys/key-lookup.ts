/**
 * Finding the key a request sends: by the digest of its text, in D1, through a cache of
 * this isolate that trusts what it read for at most KEY_CACHE_MS. That bound is what makes
 * a revocation reach every isolate within a second: an isolate that read the key before
 * the revocation reads it again, revoked, at most a second later. (The isolate that revokes
 * forgets the key at once.) Misses are not cached, so a key made a moment ago works at once.
 *
 * A key's `last_used_at` is written at most once a minute per key (per isolate, and not at
 * all while D1 has a use from the last minute), not on every request.
 */
import type { D1Database } from '../platform-types.ts';
import { keyByDigest, touchKey, type KeyRecord } from './key-store.ts';
import { keyDigest, looksLikeKey } from './key-secret.ts';

/** How long this isolate trusts a key record it read: revocation is seen everywhere within it. */
export const KEY_CACHE_MS = 1000;

/** How often a key's `last_used_at` is written at most. */
export const LAST_USED_GRAIN_MS = 60_000;

/** More keys than this in the cache, and it starts again: a bound on memory, not a policy. */
const CACHE_LIMIT = 1000;

const cache = new Map<string, { record: KeyRecord; readAt: number }>();
const touchedAt = new Map<string, number>();

/** The key whose text is `token` (revoked or not), or null when there is none. */
export async function findKey(db: D1Database, token: string): Promise<KeyRecord | null> {
  if (!looksLikeKey(token)) return null;
  const digest = await keyDigest(token);
  const now = Date.now();
  const cached = cache.get(digest);
  let record: KeyRecord | null;
  if (cached !== undefined && now - cached.readAt < KEY_CACHE_MS) record = cached.record;
  else {
    record = await keyByDigest(db, digest);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    if (record === null) cache.delete(digest);
    else cache.set(digest, { record, readAt: now });
  }
  if (record !== null && record.revoked_at === null) await noteUse(db, record, now);
  return record;
}

/** Forgets every cached read of key `id` (this isolate revoked it). */
export function forgetKey(id: string): void {
  for (const [digest, entry] of cache) if (entry.record.id === id) cache.delete(digest);
}

async function noteUse(db: D1Database, record: KeyRecord, now: number): Promise<void> {
  const last = Math.max(touchedAt.get(record.id) ?? 0, record.last_used_at === null ? 0 : Date.parse(record.last_used_at));
  if (now - last < LAST_USED_GRAIN_MS) return;
  if (touchedAt.size >= CACHE_LIMIT) touchedAt.clear();
  touchedAt.set(record.id, now);
  await touchKey(db, record.id, new Date(now).toISOString(), new Date(now - LAST_USED_GRAIN_MS).toISOString());
}
