/**
 * API auth: `Authorization: Bearer <RUNVIL_API_TOKEN>`. A request without it gets 401 and
 * reaches no route. The answer route also takes the ask's own answer token in the same
 * header (credentialOf gives it as a candidate), which the Worker checks itself
 * (waits/answer-credential.ts) before it calls the run object.
 */
import type { MiddlewareHandler } from 'hono';
import type { Env } from '../env.ts';
import { ApiError } from './http-error.ts';
import { sameSecret } from './constant-time.ts';

/** Who a request speaks for: the API token holder, or the holder of one ask's answer token. */
export type Credential = { kind: 'api' } | { kind: 'ask-token'; token: string };

/** The bearer token of the request, or null when it has none. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  if (header === null) return null;
  const match = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header);
  return match ? match[1]! : '';
}

/** The request's credential: the API token, another bearer token (a candidate ask token), or a 401. */
export async function credentialOf(request: Request, env: Env): Promise<Credential> {
  const configured = env.RUNVIL_API_TOKEN;
  const token = bearerToken(request);
  if (token === null) throw new ApiError(401, 'missing credentials: send `Authorization: Bearer <token>`');
  if (token === '') throw new ApiError(401, 'malformed Authorization header: it must read `Bearer <token>`');
  if (typeof configured === 'string' && configured !== '' && sameSecret(token, configured)) return { kind: 'api' };
  return { kind: 'ask-token', token };
}

/** Middleware: only the API token passes. */
export const requireApiToken: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  if (typeof c.env.RUNVIL_API_TOKEN !== 'string' || c.env.RUNVIL_API_TOKEN === '') {
    throw new ApiError(
      401,
      'the server has no RUNVIL_API_TOKEN configured, so it refuses every API request; set it (`wrangler secret put RUNVIL_API_TOKEN`, or .dev.vars locally)',
    );
  }
  const credential = await credentialOf(c.req.raw, c.env);
  if (credential.kind !== 'api') throw new ApiError(401, 'wrong API token');
  await next();
};
