/**
 * A grant lives only as long as what granted it: the key the person signed in with on the
 * consent page, or the root token as it was then. Revoking the key (or changing
 * RUNVIL_API_TOKEN) ends the access it granted: its tokens are refused on `/mcp` within the
 * second a revocation takes to reach every isolate (keys/key-lookup.ts), and a refresh ends
 * the grant for good.
 */
import { hexOf } from '../../json/digest.ts';
import type { Env } from '../env.ts';
import { KEY_CACHE_MS } from '../keys/key-lookup.ts';
import { keyById } from '../keys/key-store.ts';

/** What a grant's tokens carry besides their scopes (the provider's `props`): who granted them. */
export interface GrantProps {
  /** `root`, or the id of the key that signed in. */
  grantedBy: string;
  /** The digest of the root token that signed in, for a grant of the root's. */
  rootDigest?: string;
  scopes: string[];
}

/** The props of a grant made by `grantedBy` (`root` or a key's id). */
export async function grantProps(env: Env, grantedBy: string, scopes: readonly string[]): Promise<GrantProps> {
  if (grantedBy !== 'root') return { grantedBy, scopes: [...scopes] };
  return { grantedBy, rootDigest: await rootDigest(env), scopes: [...scopes] };
}

/** Whether the key (or root token) that granted a grant with `props` still stands. */
export async function granterStands(env: Env, props: unknown): Promise<boolean> {
  if (typeof props !== 'object' || props === null) return false;
  const { grantedBy, rootDigest: granted } = props as Partial<GrantProps>;
  if (grantedBy === 'root') return typeof granted === 'string' && granted === (await rootDigest(env));
  if (typeof grantedBy !== 'string') return false;
  return keyStands(env, grantedBy);
}

const keys = new Map<string, { stands: boolean; readAt: number }>();

/** Whether key `id` is there and not revoked, as D1 said at most KEY_CACHE_MS ago. */
async function keyStands(env: Env, id: string): Promise<boolean> {
  const now = Date.now();
  const cached = keys.get(id);
  if (cached !== undefined && now - cached.readAt >= 0 && now - cached.readAt < KEY_CACHE_MS) return cached.stands;
  const key = await keyById(env.RUNVIL_DB, id);
  const stands = key !== null && key.revoked_at === null;
  if (keys.size >= 1000) keys.clear();
  keys.set(id, { stands, readAt: now });
  return stands;
}

async function rootDigest(env: Env): Promise<string> {
  const root = typeof env.RUNVIL_API_TOKEN === 'string' ? env.RUNVIL_API_TOKEN : '';
  return hexOf(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`runvil-oauth-root:${root}`))));
}
