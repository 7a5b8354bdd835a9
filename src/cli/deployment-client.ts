/**
 * The command line talking to a deployment over its HTTP API (`--url`, the root key from
 * `--token` or RUNVIL_API_TOKEN): one request, its JSON answer, or a failure that says what
 * went wrong and what to do about it, as the other commands' errors carry their remedies.
 */
import type { Json } from '../json/json.ts';
import { UsageError, type DeploymentTarget } from './args.ts';

/** How long a request to the deployment may take before the command gives up. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** A request that did not get the answer it wanted: what happened, and what to do. */
export interface DeploymentFailure {
  message: string;
  remedy: string;
  /** The HTTP status of a refusal; absent when no answer came. */
  status?: number;
}

/** The deployment's answer: its JSON body, or a failure. */
export type DeploymentAnswer = { ok: true; status: number; body: { [key: string]: Json } } | { ok: false; failure: DeploymentFailure };

/** The root key the command sends: `--token`, else RUNVIL_API_TOKEN; a usage error without either. */
export function rootToken(target: DeploymentTarget, env: Record<string, string | undefined>): string {
  const token = target.token ?? env.RUNVIL_API_TOKEN;
  if (token === undefined || token === '')
    throw new UsageError("this command needs the deployment's root key: set RUNVIL_API_TOKEN to the deployment's secret, or pass --token");
  return token;
}

/** Sends `method path` (with a JSON body) to the deployment. */
export async function callDeployment(target: DeploymentTarget, token: string, method: string, path: string, body?: Json): Promise<DeploymentAnswer> {
  const url = `${target.url}${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    return { ok: false, failure: unreachable(target, error) };
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return {
      ok: false,
      failure: {
        message: `${target.url} answered ${method} ${path} with ${response.status} and no JSON: it does not look like a Runvil deployment`,
        remedy: 'check --url: it takes the deployment\'s address (its /health answers {"ok":true})',
      },
    };
  }
  const answer = parsed as { [key: string]: Json };
  if (response.ok) return { ok: true, status: response.status, body: answer };
  return { ok: false, failure: { ...refusal(target, method, path, response, answer), status: response.status } };
}

function unreachable(target: DeploymentTarget, error: unknown): DeploymentFailure {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as { code?: unknown } | null)?.code;
  const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
  const why = timedOut
    ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`
    : typeof code === 'string'
      ? code
      : cause instanceof Error
        ? cause.message
        : String(cause);
  return {
    message: `cannot reach ${target.url}: ${why}`,
    remedy:
      "check --url: is the deployment running there? (`npm start` serves one locally and prints its address; a deployed Worker's is in `wrangler deploy`'s output)",
  };
}

function refusal(target: DeploymentTarget, method: string, path: string, response: Response, answer: { [key: string]: Json }): DeploymentFailure {
  const error = answer.error !== null && typeof answer.error === 'object' && !Array.isArray(answer.error) ? answer.error : {};
  const said = typeof error.message === 'string' ? error.message : `${response.status} ${response.statusText}`;
  const message = `${target.url} refused ${method} ${path} (${response.status}): ${said}`;
  switch (response.status) {
    case 401:
      return {
        message,
        remedy: "send the deployment's root key, its RUNVIL_API_TOKEN secret: set RUNVIL_API_TOKEN to it or pass --token (locally, .dev.vars holds it)",
      };
    case 403:
      return error.scope === 'root'
        ? { message, remedy: "the token sent is a key, not the root: only the deployment's RUNVIL_API_TOKEN manages keys" }
        : { message, remedy: `the token lacks a scope this needs; make a key that has it (runvil keys create NAME --scope ${String(error.scope ?? 'SCOPE')})` };
    case 404:
      return said.startsWith('no route')
        ? { message, remedy: `the deployment at ${target.url} does not serve this route: deploy this version of Runvil there` }
        : { message, remedy: 'runvil keys list shows the keys and their ids' };
    case 429:
      return { message, remedy: `try again in ${response.headers.get('retry-after') ?? 'a minute'} s` };
    default:
      return response.status >= 500
        ? { message, remedy: 'the deployment failed to answer; its log says why (`wrangler tail`, or the output of `npm start`)' }
        : { message, remedy: 'the message above says what to change' };
  }
}
