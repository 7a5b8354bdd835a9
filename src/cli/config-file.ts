/**
 * The deployment's configuration at the command line: `--config FILE`, else ./runvil.yaml
 * when present, else none. A file that does not fit the format is a usage error with the
 * line and column of every problem (exit status 2).
 */
import { existsSync } from 'node:fs';
import { EMPTY_CONFIG, type DeploymentConfig } from '../config/deployment-config.ts';
import { parseDeploymentConfig } from '../config/parse-config.ts';
import { UsageError } from './args.ts';
import { readUserFile } from './prompt-file.ts';

/** The file `runvil run` reads when `--config` names none. */
export const DEFAULT_CONFIG_FILE = 'runvil.yaml';

/** The configuration file `runvil run` reads: `explicit` (from --config), or ./runvil.yaml when present, or null for none. */
export function deploymentConfigFile(explicit: string | undefined): string | null {
  return explicit ?? (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : null);
}

/** Reads and checks the configuration `runvil run` uses: `explicit` (from --config), or ./runvil.yaml, or none. */
export async function loadDeploymentConfig(explicit: string | undefined): Promise<DeploymentConfig> {
  const file = deploymentConfigFile(explicit);
  if (file === null) return EMPTY_CONFIG;
  const parsed = parseDeploymentConfig(await readUserFile(file, 'configuration file'));
  if (!parsed.ok) throw UsageError.inFile(file, parsed.problems);
  return parsed.config;
}

/** Whether `runvil check` reads `file` as a deployment configuration rather than a prompt. */
export function isConfigFile(file: string): boolean {
  return /\.ya?ml$/i.test(file) && !/\.test\.ya?ml$/i.test(file);
}
