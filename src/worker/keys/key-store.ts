/**
 * The keys in D1 (`RUNVIL_DB`, migrations/0002_keys.sql): digests, names, scopes, when each
 * was made, last used and revoked. Nothing here holds a key's text.
 */
import type { D1Database } from '../platform-types.ts';

/** A key as GET /keys lists it. */
export interface KeyRecord {
  id: string;
  name: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

interface KeyRow {
  id: string;
  name: string;
  scopes: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const COLUMNS = 'id, name, scopes, created_at, last_used_at, revoked_at';

const recordOf = (row: KeyRow): KeyRecord => ({ ...row, scopes: JSON.parse(row.scopes) as string[] });

/** Stores a new key by its digest. */
export async function insertKey(db: D1Database, key: Omit<KeyRecord, 'last_used_at' | 'revoked_at'>, digest: string): Promise<void> {
  await db
    .prepare('INSERT INTO keys (id, name, scopes, digest, created_at) VALUES (?1, ?2, ?3, ?4, ?5)')
    .bind(key.id, key.name, JSON.stringify(key.scopes), digest, key.created_at)
    .run();
}

/** Every key, revoked ones too, oldest first. */
export async function listKeys(db: D1Database): Promise<KeyRecord[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM keys ORDER BY created_at, id`).all<KeyRow>();
  return results.map(recordOf);
}

/** The key whose text has this digest, or null. */
export async function keyByDigest(db: D1Database, digest: string): Promise<KeyRecord | null> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM keys WHERE digest = ?1`).bind(digest).all<KeyRow>();
  const row = results[0];
  return row === undefined ? null : recordOf(row);
}

/** The key `id`, or null. */
export async function keyById(db: D1Database, id: string): Promise<KeyRecord | null> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM keys WHERE id = ?1`).bind(id).all<KeyRow>();
  const row = results[0];
  return row === undefined ? null : recordOf(row);
}

/** Revokes key `id` at `at` (a key revoked before keeps its first time). */
export async function revokeKey(db: D1Database, id: string, at: string): Promise<void> {
  await db.prepare('UPDATE keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL').bind(id, at).run();
}

/** Records that key `id` was used at `at`, unless a use since `notBefore` is recorded already. */
export async function touchKey(db: D1Database, id: string, at: string, notBefore: string): Promise<void> {
  await db.prepare('UPDATE keys SET last_used_at = ?2 WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?3)').bind(id, at, notBefore).run();
}
