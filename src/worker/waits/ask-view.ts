/**
 * How the Worker shows asks: the run object's asks with their answer tokens (derived here,
 * ask-token.ts) and answer URLs, and the answer route's response to an ask token's holder,
 * which shows that one ask and the run's status, never another ask's token or the result.
 */
import { askToken } from './ask-token.ts';
import type { Env } from '../env.ts';
import { answerUrl } from '../deployment/public-origin.ts';
import type { AskInfo, ObjectView, PendingAsk, RunStatus, RunView } from '../run-object/run-view.ts';

/** What an ask token's holder gets for an answer (DESIGN.md Part 2, "Asks"). */
export interface AskTokenResponse {
  ask: PendingAsk & { status: 'answered' };
  run: { run_id: string; status: RunStatus };
}

/** An ask with its token and the URL its answer is posted to (on the deployment's public origin: public-origin.ts). */
export async function publicAsk(env: Env, ask: AskInfo): Promise<PendingAsk> {
  return { ...ask, token: await askToken(env, ask.run_id, ask.ask_id), answer_url: answerUrl(env, ask.run_id, ask.ask_id) };
}

/** The run view as the API answers it: each pending ask with its token and answer URL (a waiting tool call as it is). */
export async function publicView(env: Env, view: ObjectView): Promise<RunView> {
  return { ...view, pending: await Promise.all(view.pending.map((entry) => (entry.kind === 'ask' ? publicAsk(env, entry) : entry))) };
}

/** The answer's response for the holder of the ask's own token. */
export async function askTokenResponse(env: Env, ask: AskInfo, view: ObjectView): Promise<AskTokenResponse> {
  return { ask: { ...(await publicAsk(env, ask)), status: 'answered' }, run: { run_id: view.run_id, status: view.status } };
}
