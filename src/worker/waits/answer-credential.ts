/**
 * Who may answer an ask: the API token's holder, or the holder of that ask's own answer
 * token (ask-token.ts). The Worker decides it before it calls the run object, so a wrong
 * token is a 401 without a Durable Object invocation.
 */
import type { Env } from '../env.ts';
import { credentialOf, type Credential } from '../http/auth.ts';
import { ApiError } from '../http/http-error.ts';
import { askSecret, isAskToken } from './ask-token.ts';

/**
 * The credential of an answer to ask `askId` of run `runId`: the API token, a key (whose scope
 * the route checks), or that ask's own token; anything else is a 401 decided here, without a call to the run object.
 */
export async function answerCredential(request: Request, env: Env, runId: string, askId: string): Promise<Credential> {
  const credential = await credentialOf(request, env);
  if (credential.kind !== 'ask-token') return credential;
  if (askSecret(env) === null)
    throw new ApiError(401, 'the server has no RUNVIL_API_TOKEN (or RUNVIL_ASK_SECRET) configured, so it cannot check answer tokens');
  if (!(await isAskToken(env, runId, askId, credential.token))) {
    throw new ApiError(401, 'wrong token: send the API token, or the answer token of this ask (an ask token answers its own ask only)');
  }
  return credential;
}
