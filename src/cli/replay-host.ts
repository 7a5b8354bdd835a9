/**
 * The Host a run in flight is replayed on by `runvil deploy-check`: the one the deployment
 * would serve it with after the deploy (worker-host.ts), as far as a replay sees a Host: the
 * runvil Packs, the HTTP tool services of the local runvil.yaml, and the MCP Packs the run
 * was prepared with (their tool lists as the run keeps them). Nothing behind them is called:
 * the replay answers every effect from the journal (src/host/replay-check.ts).
 */
import { runvilPacks } from '../../packs/index.ts';
import type { DeploymentConfig } from '../config/deployment-config.ts';
import type { HostConfig } from '../host/host.ts';
import { ScriptedOperator } from '../host/operator.ts';
import type { Pack } from '../host/pack.ts';
import { httpToolPacks } from '../host/remote/http/http-tool-pack.ts';
import type { PackSnapshot } from '../host/remote/configured-packs.ts';
import type { Json } from '../json/json.ts';

/**
 * Makes the replay Host of each run: the Packs of `config` built once, a run's own MCP Packs
 * added. The MCP client's modules load only for a run that kept MCP Packs: they take seconds
 * to load, and a replay thread starts while the first journals are fetched.
 */
export function replayHosts(config: DeploymentConfig, vars: Readonly<Record<string, string | undefined>>): (snapshots: Json) => Promise<HostConfig> {
  const base: Pack[] = [...runvilPacks(), ...httpToolPacks(config.packs.values(), { vars })];
  const models = { provider: () => 'a replay check calls no model' };
  const operator = new ScriptedOperator([]);
  return async (snapshots) => {
    const kept = Array.isArray(snapshots) ? (snapshots as unknown as PackSnapshot[]) : [];
    if (kept.length === 0) return { packs: base, models, operator };
    const { snapshotPacksToPacks } = await import('../host/remote/configured-packs.ts');
    return { packs: [...base, ...snapshotPacksToPacks(kept, vars)], models, operator };
  };
}
