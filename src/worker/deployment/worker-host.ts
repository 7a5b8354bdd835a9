/**
 * The Host runs are served with on Workers: the runvil Packs (web/fetch over `fetch`;
 * web/search when BRAVE_SEARCH_API_KEY or TAVILY_API_KEY is set), the model providers the
 * environment configures (OPENAI_API_KEY, ANTHROPIC_API_KEY, the AI binding,
 * RUNVIL_DEFAULT_MODEL), the HTTP tool services of runvil.yaml (http-tool-pack.ts), and the
 * run object's operator.
 */
import { runvilPacks, searchProviderFromEnv, SEARCH_PROVIDER_SERVICE } from '../../../packs/index.ts';
import type { HostConfig } from '../../host/host.ts';
import type { Operator } from '../../host/operator.ts';
import { modelDirectory } from '../../models/directory.ts';
import { textVars, type Env } from '../env.ts';
import { EMPTY_CONFIG, type DeploymentConfig } from '../../config/deployment-config.ts';
import { httpToolPacks } from '../../host/remote/http/http-tool-pack.ts';

/** The Worker's Host for one run, asking `operator`, with the Packs `config` (runvil.yaml) adds. */
export function workerHost(env: Env, operator: Operator, config: DeploymentConfig = EMPTY_CONFIG): HostConfig {
  const vars = textVars(env);
  const services: Record<string, unknown> = {};
  const search = searchProviderFromEnv(vars);
  if (search) services[SEARCH_PROVIDER_SERVICE] = search;
  return {
    packs: [...runvilPacks(), ...httpToolPacks(config.packs.values(), { vars })],
    services,
    models: modelDirectory(vars, env.AI ? { ai: env.AI } : {}),
    operator,
  };
}
