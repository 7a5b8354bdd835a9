/**
 * The deployment's public origin: where a tool service posts a call's result (callback URLs,
 * which carry the call's token) and where an ask's answer goes (`answer_url`, in views and
 * notifications). It comes from configuration only: runvil.yaml's `public_url`, else
 * `RUNVIL_ORIGIN`, which `npm start` sets to the address it serves on (a deployment may set
 * it as a Worker var too). Never from a request: its Host header is whatever the sender
 * wrote, and a run started, or a list read, through a forged Host would hand out callback
 * tokens and answer links pointing at the sender's server.
 *
 * A deployment with neither has no public origin: answer URLs are null (the API and the
 * console still answer asks), and a call to an HTTP tool service fails, saying to set
 * `public_url`.
 */
import type { DeploymentConfig } from '../../config/deployment-config.ts';
import { originProblem, resolveConfigUrl } from '../../config/config-urls.ts';
import { deploymentConfig } from './deployment.ts';
import { textVars, type Env } from '../env.ts';

/** The deployment's public origin, without a trailing slash, or why it has none. */
export type PublicOrigin = { ok: true; origin: string } | { ok: false; message: string };

/** Why a deployment with neither `public_url` nor RUNVIL_ORIGIN has no public origin. */
export const NO_PUBLIC_ORIGIN =
  "the deployment has no public URL: set public_url in runvil.yaml (such as https://runvil.example.com); Runvil does not take its address from a request's Host header, which the sender chooses";

/** The public origin of the deployment `config` describes (the bundled runvil.yaml by default). */
export function publicOrigin(env: Env, config: DeploymentConfig = deploymentConfig()): PublicOrigin {
  if (config.publicUrl !== null) {
    const resolved = resolveConfigUrl(config.publicUrl, textVars(env), 'public_url', 'origin');
    return resolved.ok ? { ok: true, origin: withoutSlash(resolved.value) } : { ok: false, message: resolved.error.message };
  }
  const started = Object.hasOwn(env, 'RUNVIL_ORIGIN') ? env.RUNVIL_ORIGIN : undefined;
  if (typeof started !== 'string' || started === '') return { ok: false, message: NO_PUBLIC_ORIGIN };
  const problem = originProblem(started, false);
  return problem === null ? { ok: true, origin: withoutSlash(started) } : { ok: false, message: `RUNVIL_ORIGIN ${problem}` };
}

/** The URL an answer to ask `askId` of run `runId` is posted to, or null without a public origin. */
export function answerUrl(env: Env, runId: string, askId: string): string | null {
  const origin = publicOrigin(env);
  return origin.ok ? `${origin.origin}/runs/${runId}/asks/${encodeURIComponent(askId)}` : null;
}

const withoutSlash = (origin: string): string => origin.replace(/\/+$/, '');
