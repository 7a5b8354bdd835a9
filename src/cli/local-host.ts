/**
 * The Host of `runvil run` without `--script`: the runvil Packs with the real page fetcher,
 * a search provider when the environment configures one, the operator at the command line,
 * and the model providers the environment configures (none yet: a model round fails with a
 * message that says how to run the prompt anyway).
 */
import { runvilPacks, searchProviderFromEnv, SEARCH_PROVIDER_SERVICE } from '../../packs/index.ts';
import type { ModelDirectory } from '../host/harness.ts';
import type { HostConfig } from '../host/host.ts';
import type { Operator } from '../host/operator.ts';

/** Builds the local Host from the process environment. */
export function localHost(env: Record<string, string | undefined>, operator: Operator): HostConfig {
  const services: Record<string, unknown> = {};
  const search = searchProviderFromEnv(env);
  if (search) services[SEARCH_PROVIDER_SERVICE] = search;
  return { packs: runvilPacks(), services, models: unconfiguredModels(), operator };
}

/** A model directory with no providers: every round fails with what to do about it. */
export function unconfiguredModels(): ModelDirectory {
  return {
    provider: (_config, role) =>
      `no model provider is configured for role "${role}" (this build of runvil has none yet); run with --script FILE to answer model rounds from a script`,
  };
}
