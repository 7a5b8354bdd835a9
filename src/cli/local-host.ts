/**
 * The Host of `runvil run` without `--script`: the runvil Packs with the real page fetcher,
 * a search provider when the environment configures one, the operator at the command line,
 * and the model providers the environment configures (OPENAI_API_KEY, ANTHROPIC_API_KEY,
 * RUNVIL_DEFAULT_MODEL, ...), or the model `--model` names for every role; and the HTTP tool
 * services of runvil.yaml, whose results come back to `runvil run`'s loopback listener.
 */
import { runvilPacks, searchProviderFromEnv, SEARCH_PROVIDER_SERVICE } from '../../packs/index.ts';
import type { HostConfig } from '../host/host.ts';
import type { Operator } from '../host/operator.ts';
import { modelDirectory, type ModelChoice } from '../models/directory.ts';
import { EMPTY_CONFIG, type DeploymentConfig } from '../config/deployment-config.ts';
import { httpToolPacks } from '../host/remote/http/http-tool-pack.ts';

/** What a Host with no model provider at all says to do instead. */
export const SCRIPT_HINT = 'or run with --script FILE to answer model rounds from a script';

/**
 * Builds the local Host from the process environment; `model` replaces every role's provider
 * and model; `config` (runvil.yaml) adds its HTTP tool services.
 */
export function localHost(
  env: Record<string, string | undefined>,
  operator: Operator,
  model?: ModelChoice,
  config: DeploymentConfig = EMPTY_CONFIG,
): HostConfig {
  const services: Record<string, unknown> = {};
  const search = searchProviderFromEnv(env);
  if (search) services[SEARCH_PROVIDER_SERVICE] = search;
  const models = modelDirectory(env, {}, { unconfiguredHint: SCRIPT_HINT, ...(model ? { override: model } : {}) });
  return { packs: [...runvilPacks(), ...httpToolPacks(config.packs.values(), { vars: env })], services, models, operator };
}
