/**
 * The Packs a prompt declares under `uses:` that a deployment does not have: the deployment
 * has runvil's own Packs and the Packs its runvil.yaml configures. Reported, not refused, by
 * the upload (a Pack may be configured later) and by `runvil check --config`.
 */
import type { UsesEntry } from '../prompt/types.ts';
import type { DeploymentConfig } from './deployment-config.ts';
import { RUNVIL_PACK_NAMES } from './runvil-pack-names.ts';

/** A `uses:` entry naming a Pack the deployment does not have, placed at the entry. */
export interface MissingPack {
  /** The Pack's fully qualified name, such as `acme/crm`. */
  pack: string;
  line: number;
  column: number;
  message: string;
}

/** The `uses:` entries of a prompt whose Pack the deployment `config` (from `configFile`) does not have, in written order. */
export function missingPacks(uses: readonly UsesEntry[], config: DeploymentConfig, configFile = 'runvil.yaml'): MissingPack[] {
  const missing: MissingPack[] = [];
  for (const entry of uses) {
    if (RUNVIL_PACK_NAMES.includes(entry.fqName) || config.packs.has(entry.fqName)) continue;
    const fix =
      entry.vendor === 'runvil'
        ? `runvil's own Packs are ${RUNVIL_PACK_NAMES.map((name) => name.slice('runvil/'.length)).join(', ')}`
        : `configure it under \`packs:\` in ${configFile}`;
    missing.push({
      pack: entry.fqName,
      line: entry.line,
      column: entry.column,
      message: `the prompt declares the Pack ${entry.fqName} (uses: \`${entry.text}\`), which this deployment does not have: ${fix}; a run of this prompt fails until it has it`,
    });
  }
  return missing;
}
