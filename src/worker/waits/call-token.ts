/**
 * Callback tokens of tool calls: HMAC-SHA256(deployment secret, "runvil tool call token v1\n"
 * + run id + "\n" + call id), as hex, derived like ask tokens (ask-token.ts) under their own
 * label, so no ask token is a call token or the other way round. The Worker checks one before
 * it calls the run object: a caller without it gets 401 and learns nothing about which runs
 * or calls exist. A token delivers the result of one call of one run, nothing else.
 */
import { WAIT_KINDS } from '../../host/waits/wait-kinds.ts';
import { isTokenShaped } from '../../host/waits/wait-token.ts';
import { derivedToken } from './ask-token.ts';
import { sameSecret } from '../http/constant-time.ts';
import type { Env } from '../env.ts';

/** The callback token of call `callId` of run `runId`, or null when the deployment has no secret. */
export function callToken(env: Env, runId: string, callId: string): Promise<string | null> {
  return derivedToken(env, WAIT_KINDS.call.tokenLabel, runId, callId);
}

/** True when `token` is the callback token of call `callId` of run `runId` (compared in constant time). */
export async function isCallToken(env: Env, runId: string, callId: string, token: string): Promise<boolean> {
  if (!isTokenShaped(token)) return false;
  const expected = await callToken(env, runId, callId);
  return expected !== null && sameSecret(token, expected);
}
