/**
 * `POST /keys`, `GET /keys`, `DELETE /keys/:id` (the root only: DESIGN.md Part 3, "Keys and
 * scopes"), and `GET /whoami`, which tells any caller who it is to the API and what it may
 * do (the console reads it to know whether it is read-only).
 */
import { Hono } from 'hono';
import type { Env } from '../env.ts';
import { checkJsonContentType, onlyKeys, parseJsonObject, readText } from '../http/body.ts';
import { ApiError } from '../http/http-error.ts';
import { authenticate, requireRoot } from '../http/auth.ts';
import type { Json } from '../../json/json.ts';
import { forgetKey } from './key-lookup.ts';
import { keyDigest, newKeyId, newKeyText } from './key-secret.ts';
import { insertKey, keyById, listKeys, revokeKey } from './key-store.ts';
import { isScope, SCOPE_GRAMMAR } from './scopes.ts';

/** The longest key name, in characters. */
export const MAX_KEY_NAME_CHARS = 100;
/** The most scopes one key holds. */
export const MAX_KEY_SCOPES = 50;

/** The key routes. */
export const keyRoutes = new Hono<{ Bindings: Env }>();

keyRoutes.post('/keys', requireRoot, async (c) => {
  checkJsonContentType(c.req.raw);
  const body = parseJsonObject(await readText(c.req.raw));
  onlyKeys(body, ['name', 'scopes']);
  const name = nameOf(body.name);
  const scopes = scopesOf(body.scopes);
  const key = newKeyText();
  const record = { id: newKeyId(), name, scopes, created_at: new Date().toISOString() };
  await insertKey(c.env.RUNVIL_DB, record, await keyDigest(key));
  return c.json({ id: record.id, name, scopes, key, created_at: record.created_at }, 201);
});

keyRoutes.get('/keys', requireRoot, async (c) => c.json({ keys: await listKeys(c.env.RUNVIL_DB) }));

keyRoutes.delete('/keys/:id', requireRoot, async (c) => {
  const id = c.req.param('id');
  await revokeKey(c.env.RUNVIL_DB, id, new Date().toISOString());
  forgetKey(id);
  const key = await keyById(c.env.RUNVIL_DB, id);
  if (key === null) throw new ApiError(404, `no key ${JSON.stringify(id.slice(0, 100))}: GET /keys (or runvil keys list) lists the keys and their ids`);
  return c.json(key);
});

keyRoutes.get('/whoami', async (c) => {
  const principal = await authenticate(c.req.raw, c.env);
  if (principal.kind === 'root') return c.json({ kind: 'root', scopes: null });
  if (principal.kind === 'key') return c.json({ kind: 'key', id: principal.id, name: principal.name, scopes: principal.scopes });
  return c.json({ kind: 'oauth', client_id: principal.clientId, scopes: principal.scopes });
});

function nameOf(value: Json | undefined): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new ApiError(400, '`name` must be a non-empty string: what the key is for, such as "chat-bridge"', { field: 'name' });
  const chars = [...value].length;
  if (chars > MAX_KEY_NAME_CHARS) throw new ApiError(400, `\`name\` is ${chars} characters long; it takes at most ${MAX_KEY_NAME_CHARS}`, { field: 'name' });
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new ApiError(400, '`name` may not hold control characters (a newline, a tab)', { field: 'name' });
  return value;
}

function scopesOf(value: Json | undefined): string[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new ApiError(400, `\`scopes\` must be a non-empty list of scopes (${SCOPE_GRAMMAR})`, { field: 'scopes' });
  if (value.length > MAX_KEY_SCOPES)
    throw new ApiError(400, `\`scopes\` lists ${value.length} scopes; a key holds at most ${MAX_KEY_SCOPES}`, { field: 'scopes' });
  const scopes: string[] = [];
  for (const scope of value) {
    if (typeof scope !== 'string' || !isScope(scope)) {
      const shown = typeof scope === 'string' ? JSON.stringify(scope.length > 120 ? `${scope.slice(0, 120)}...` : scope) : JSON.stringify(scope).slice(0, 120);
      throw new ApiError(400, `\`scopes\` has ${shown}, which is no scope; the scopes are ${SCOPE_GRAMMAR}`, {
        field: 'scopes',
        scope: typeof scope === 'string' ? scope.slice(0, 120) : null,
      });
    }
    if (!scopes.includes(scope)) scopes.push(scope);
  }
  return scopes;
}
