/**
 * The deployment's configuration in the Worker: the runvil.yaml bundled at build time
 * (scripts/bundle-config.mjs checked it then), parsed once per isolate.
 */
import { EMPTY_CONFIG, type DeploymentConfig } from '../../config/deployment-config.ts';
import { formatConfigProblem, parseDeploymentConfig } from '../../config/parse-config.ts';
import { BUNDLED_CONFIG } from './bundled-config.generated.ts';

let parsed: DeploymentConfig | null = null;
let replaced: DeploymentConfig | null = null;

/** The deployment's configuration: the bundled runvil.yaml, or EMPTY_CONFIG without one. */
export function deploymentConfig(): DeploymentConfig {
  if (replaced) return replaced;
  if (parsed) return parsed;
  if (BUNDLED_CONFIG === null) return (parsed = EMPTY_CONFIG);
  const outcome = parseDeploymentConfig(BUNDLED_CONFIG.text);
  // The build refused a bad file, so this is a bundle edited by hand: fail loudly, once per request.
  if (!outcome.ok) throw new Error(outcome.problems.map((problem) => formatConfigProblem(BUNDLED_CONFIG!.file, problem)).join('\n'));
  return (parsed = outcome.config);
}

/**
 * Serves this isolate with another configuration (null: the bundled one again). For a
 * Worker whose configuration is only known when it starts, such as the workerd tests',
 * whose MCP server listens on a port chosen at run time.
 */
export function replaceDeploymentConfig(config: DeploymentConfig | null): void {
  replaced = config;
}
