/**
 * Starting a run of a deployed prompt, for the API and for webhooks: the prompt is found
 * and parsed, the args are checked against its `args:` (a 400 names the field), and only
 * then is the run object created.
 */
import { argsFromData } from '../../prompt/run-args.ts';
import type { Json } from '../../json/json.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import type { DoId } from '../platform-types.ts';
import { findPrompt, parseDeployed, type DeployedPrompt } from '../deployment/prompt-library.ts';
import { runTimeoutSeconds } from './run-alarm.ts';
import { randomToken } from '../http/constant-time.ts';
import type { ObjectView } from './run-view.ts';

/** A run to start. */
export interface RunRequest {
  prompt: string;
  args: { [name: string]: Json };
  seed?: string;
  /** The run's id (a webhook's, or an Idempotency-Key's: run-ids.ts); a fresh one when absent. */
  id?: DoId;
  webhook_id?: string;
  /**
   * Args whose values came from outside (a trigger's payload): the run reads them as the
   * run's envelope wraps untrusted text, and a chain that reads them is tainted.
   */
  untrustedArgs?: readonly string[];
  /** With it, the run as it is once no longer running (suspended or ended), or after this long. */
  waitMs?: number;
  /** The prompt, when the caller has just read it (an MCP call did, to serve its tool): it is not read again. */
  deployed?: DeployedPrompt;
}

/** Starts a run; `created` is false when the id already held one (a redelivered webhook, a retried start). */
export async function startRun(env: Env, request: RunRequest): Promise<{ created: boolean; view: ObjectView }> {
  const deployed = request.deployed?.name === request.prompt ? request.deployed : await findPrompt(env.RUNVIL_KV, request.prompt);
  if (!deployed) throw new ApiError(404, `no prompt named ${JSON.stringify(request.prompt)} is deployed (GET /prompts lists them)`);
  const prompt = parseDeployed(deployed.name, deployed.source);
  const args = argsFromData(prompt.frontmatter.args, request.args);
  if (!args.ok) throw new ApiError(400, args.message, { field: args.arg });
  const id = request.id ?? env.RUNS.newUniqueId();
  return env.RUNS.get(id).start(
    {
      prompt: deployed.name,
      source: deployed.source,
      args: args.args,
      seed: request.seed ?? randomToken().slice(0, 16),
      timeout_seconds: runTimeoutSeconds(env.RUNVIL_RUN_TIMEOUT_SECONDS),
      ...(request.webhook_id !== undefined ? { webhook_id: request.webhook_id } : {}),
      ...untrustedOf(request.untrustedArgs, args.args),
    },
    request.waitMs ?? 0,
  );
}

/** The run's untrusted args, once each, in the order given: only args the run has carry a value. */
function untrustedOf(names: readonly string[] | undefined, args: { [name: string]: Json }): { untrusted_args?: string[] } {
  const kept = [...new Set(names ?? [])].filter((name) => Object.hasOwn(args, name));
  return kept.length > 0 ? { untrusted_args: kept } : {};
}
