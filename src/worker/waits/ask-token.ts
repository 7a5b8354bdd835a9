/**
 * Ask answer tokens, minted and checked by the Worker alone: an ask's token is its wait's
 * token (src/host/waits/wait-token.ts) under the deployment secret:
 * HMAC-SHA256(deployment secret, "runvil ask token v1\n" + run id + "\n" + ask id), as hex.
 * So the answer route can tell a good token from a bad one before it calls the run object:
 * an unauthenticated caller gets 401 without a Durable Object invocation and learns nothing
 * about which runs or asks exist. A token names one ask of one run; it answers nothing else.
 *
 * The secret is `RUNVIL_ASK_SECRET` when set, else `RUNVIL_API_TOKEN` (whoever holds the
 * API token can answer every ask already, so deriving from it gives nobody more). Changing
 * the secret changes every ask's token.
 */
import { WAIT_KINDS } from '../../host/waits/wait-kinds.ts';
import { isTokenShaped, waitToken, waitTokenKey } from '../../host/waits/wait-token.ts';
import type { Env } from '../env.ts';
import { sameSecret } from '../http/constant-time.ts';

/** The imported HMAC key of the last secret seen: importing costs more than signing. */
let cached: { secret: string; key: Promise<CryptoKey> } | null = null;

/** The secret ask tokens are derived from, or null when the deployment has none. */
export function askSecret(env: Env): string | null {
  for (const name of ['RUNVIL_ASK_SECRET', 'RUNVIL_API_TOKEN'] as const) {
    const value = Object.hasOwn(env, name) ? env[name] : undefined;
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

function keyOf(secret: string): Promise<CryptoKey> {
  if (cached?.secret !== secret) {
    cached = { secret, key: waitTokenKey(secret) };
  }
  return cached.key;
}

/** The answer token of ask `askId` of run `runId`, or null when the deployment has no secret. */
export function askToken(env: Env, runId: string, askId: string): Promise<string | null> {
  return derivedToken(env, WAIT_KINDS.ask.tokenLabel, runId, askId);
}

/**
 * HMAC-SHA256(deployment secret, label + "\n" + run id + "\n" + id) as hex (wait-token.ts), or
 * null when the deployment has no secret: the token of one thing (`id`) of one run, for one
 * purpose (`label`).
 */
export async function derivedToken(env: Env, label: string, runId: string, id: string): Promise<string | null> {
  const secret = askSecret(env);
  if (secret === null) return null;
  return waitToken(await keyOf(secret), label, runId, id);
}

/** True when `token` is the answer token of ask `askId` of run `runId` (compared in constant time). */
export async function isAskToken(env: Env, runId: string, askId: string, token: string): Promise<boolean> {
  // A cheap structural check first: a token is 64 hex digits.
  if (!isTokenShaped(token)) return false;
  const expected = await askToken(env, runId, askId);
  return expected !== null && sameSecret(token, expected);
}
