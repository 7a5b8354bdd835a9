/**
 * Where a tool service sends a call's result: the callback URL and token of one call,
 * on `public_url` from runvil.yaml, else on the origin of the request that started the run.
 */
import { resolveConfigValue, type DeploymentConfig } from '../config/deployment-config.ts';
import { callToken } from './call-token.ts';
import { textVars, type Env } from './env.ts';
import type { RunMeta } from './run-state.ts';

/** The callback URL and token of call `callId` of the run `meta` describes; throws when the deployment gives neither. */
export async function callbackOf(env: Env, config: DeploymentConfig, meta: RunMeta, callId: string): Promise<{ url: string; token: string }> {
  const configured = config.publicUrl;
  const resolved = configured === null ? null : resolveConfigValue(configured, textVars(env));
  if (resolved && !resolved.ok) throw new Error(resolved.error.message);
  const origin = (resolved?.value ?? meta.origin ?? '').replace(/\/+$/, '');
  const token = await callToken(env, meta.run_id, callId);
  if (origin === '' || token === null) throw new Error('no callback URL or token: set public_url in runvil.yaml and RUNVIL_API_TOKEN');
  return { url: `${origin}/runs/${meta.run_id}/tool-results/${callId}`, token };
}
