/**
 * Each key's rate limit: its requests per minute, counted by Workers' rate-limit binding
 * (`RUNVIL_KEY_LIMIT`, wrangler.toml `[[ratelimits]]`), keyed by the key's id (an OAuth
 * token by its client). The root is not limited: it is the operator's own credential, the
 * one that would lift any limit, and the one an operator needs when a key runs wild.
 * Without the binding nothing is limited.
 */
import type { Env } from '../env.ts';
import type { Principal } from './principal.ts';

/** The binding's period (wrangler.toml `simple.period`): a refused caller may try again within it. */
export const RATE_LIMIT_PERIOD_SECONDS = 60;

/** Whether `principal` may make one more request now (counting it). */
export async function withinRateLimit(env: Env, principal: Principal): Promise<boolean> {
  const limiter = env.RUNVIL_KEY_LIMIT;
  if (principal.kind === 'root' || limiter === undefined) return true;
  const key = principal.kind === 'key' ? `key:${principal.id}` : `oauth:${principal.clientId}`;
  return (await limiter.limit({ key })).success;
}
