/**
 * API auth: `Authorization: Bearer <credential>`, where the credential is the root
 * (RUNVIL_API_TOKEN) or a key the root made (keys/), each route naming the scope it needs
 * (requireScope; keys/scopes.ts says what each scope allows). No credential, or one nobody
 * knows, or a revoked key: 401. A key without the scope: 403 naming the scope. A key past
 * its rate limit: 429 with `Retry-After`. The answer and tool-result routes also take one
 * ask's (or one call's) own token in the same header (credentialOf gives it as a
 * candidate), which the Worker checks itself before it calls the run object.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Env } from '../env.ts';
import { ApiError } from './http-error.ts';
import { sameSecret } from './constant-time.ts';
import { grantOf } from './oauth-grant.ts';
import { findKey } from '../keys/key-lookup.ts';
import { looksLikeKey } from '../keys/key-secret.ts';
import { RATE_LIMIT_PERIOD_SECONDS, withinRateLimit } from '../keys/key-rate-limit.ts';
import { allows, ROOT_ONLY } from '../keys/scopes.ts';
import type { Principal } from '../keys/principal.ts';

export type { Principal } from '../keys/principal.ts';

declare module 'hono' {
  interface ContextVariableMap {
    /** Who the request speaks for, once requireScope has authenticated it. */
    principal: Principal;
  }
}

/** Who a request speaks for: the root, a key, or the holder of one ask's (or call's) own token. */
export type Credential = { kind: 'api' } | { kind: 'key'; principal: Principal } | { kind: 'ask-token'; token: string };

/** The bearer token of the request, or null when it has none. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  if (header === null) return null;
  const match = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header);
  return match ? match[1]! : '';
}

// One authentication per request, however many middlewares and routes ask: a key's request counts once against its limit.
const authenticated = new WeakMap<Request, Promise<Principal>>();

/** Who the request speaks for, or an ApiError: 401 (no, unknown or revoked credential), 429 (past the key's rate limit). */
export function authenticate(request: Request, env: Env): Promise<Principal> {
  let principal = authenticated.get(request);
  if (principal === undefined) {
    principal = principalOf(request, env);
    authenticated.set(request, principal);
  }
  return principal;
}

async function principalOf(request: Request, env: Env): Promise<Principal> {
  // An OAuth access token on /mcp, which the provider checked and vouched for (oauth/oauth-worker.ts).
  const grant = grantOf(request);
  if (grant !== null) return limited(env, { kind: 'oauth', clientId: grant.clientId, scopes: grant.scopes }, `OAuth client ${JSON.stringify(grant.clientId)}`);
  const root = env.RUNVIL_API_TOKEN;
  if (typeof root !== 'string' || root === '') {
    throw new ApiError(
      401,
      'the server has no RUNVIL_API_TOKEN configured, so it refuses every API request; set it (`wrangler secret put RUNVIL_API_TOKEN`, or .dev.vars locally)',
    );
  }
  const token = presentedToken(request);
  if (sameSecret(token, root)) return { kind: 'root' };
  if (!looksLikeKey(token)) throw new ApiError(401, 'wrong API token');
  return keyPrincipal(env, token);
}

/** The bearer token, or a 401 for a request without one. */
function presentedToken(request: Request): string {
  const token = bearerToken(request);
  if (token === null) throw new ApiError(401, 'missing credentials: send `Authorization: Bearer <token>`');
  if (token === '') throw new ApiError(401, 'malformed Authorization header: it must read `Bearer <token>`');
  return token;
}

async function keyPrincipal(env: Env, token: string): Promise<Principal> {
  const key = await findKey(env.RUNVIL_DB, token);
  if (key === null) throw new ApiError(401, 'unknown key: this deployment has no such key (copy it whole, as `runvil keys create` printed it)');
  if (key.revoked_at !== null) throw new ApiError(401, `this key was revoked at ${key.revoked_at}: ask the deployment's operator for a new one`);
  return limited(env, { kind: 'key', id: key.id, name: key.name, scopes: key.scopes }, `key ${JSON.stringify(key.name)}`);
}

/** `principal`, counted against its rate limit (an OAuth client's as a key's); 429 past it. */
async function limited(env: Env, principal: Principal, who: string): Promise<Principal> {
  if (await withinRateLimit(env, principal)) return principal;
  throw new ApiError(
    429,
    `${who} is past its rate limit of requests per minute: try again after the time Retry-After gives`,
    {},
    {
      'retry-after': String(RATE_LIMIT_PERIOD_SECONDS),
    },
  );
}

/**
 * The request's credential: the root, a key (checked as authenticate does), or another bearer
 * token as a candidate ask (or call) token, which the route checks; no token is a 401.
 */
export async function credentialOf(request: Request, env: Env): Promise<Credential> {
  const token = presentedToken(request);
  const root = env.RUNVIL_API_TOKEN;
  if (typeof root === 'string' && root !== '' && sameSecret(token, root)) return { kind: 'api' };
  if (looksLikeKey(token)) return { kind: 'key', principal: await authenticate(request, env) };
  return { kind: 'ask-token', token };
}

/** Refuses with 403, naming `scope`, unless `principal` has it. */
export function checkScope(principal: Principal, scope: string): void {
  if (allows(principal, scope)) return;
  if (scope === ROOT_ONLY) {
    throw new ApiError(403, 'only the root key (RUNVIL_API_TOKEN) manages keys: no key may make, list or revoke keys, not even one with admin', {
      scope: ROOT_ONLY,
    });
  }
  const holder = principal.kind === 'oauth' ? 'this token was not granted' : 'this key lacks';
  throw new ApiError(403, `${holder} the scope ${scope}: ask the deployment's operator for a key that has it`, { scope });
}

/** The scope a route needs: fixed, or found from the request (the prompt of the run it names). */
export type ScopeOf = string | ((c: Context<{ Bindings: Env }>) => string | Promise<string>);

/**
 * Middleware: the request must come from a principal with `scope` (a function of the
 * request for scopes that name the prompt of a run). The principal is then `c.get('principal')`.
 */
export function requireScope(scope: ScopeOf): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    const principal = await authenticate(c.req.raw, c.env);
    c.set('principal', principal);
    checkScope(principal, typeof scope === 'string' ? scope : await scope(c));
    await next();
  };
}

/** Middleware: only the root passes (managing keys). */
export const requireRoot = requireScope(ROOT_ONLY);

/**
 * Middleware for a route that names no finer scope: the root, or a key with `admin`. Each
 * route of the API names its own scope; this stays for code written against the one token.
 */
export const requireApiToken = requireScope('admin');
