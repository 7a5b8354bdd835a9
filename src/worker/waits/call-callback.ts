/**
 * Where a tool service sends a call's result: the callback URL and token of one call, on
 * the deployment's public origin (public-origin.ts: runvil.yaml's `public_url`, else
 * RUNVIL_ORIGIN), never on a request's Host header.
 */
import type { DeploymentConfig } from '../../config/deployment-config.ts';
import { callToken } from './call-token.ts';
import type { Env } from '../env.ts';
import { publicOrigin } from '../deployment/public-origin.ts';
import type { RunMeta } from '../run-object/run-state.ts';

/** The callback URL and token of call `callId` of the run `meta` describes; throws, saying what to set, when the deployment cannot give them. */
export async function callbackOf(env: Env, config: DeploymentConfig, meta: RunMeta, callId: string): Promise<{ url: string; token: string }> {
  const origin = publicOrigin(env, config);
  if (!origin.ok) throw new Error(origin.message);
  const token = await callToken(env, meta.run_id, callId);
  if (token === null) throw new Error('the deployment has no RUNVIL_API_TOKEN (nor RUNVIL_ASK_SECRET) to derive a callback token from');
  return { url: `${origin.origin}/runs/${meta.run_id}/tool-results/${callId}`, token };
}
