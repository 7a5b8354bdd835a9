/**
 * The build this Worker is (src/host/run-build.ts): its Engine, its Lua runtime and the
 * configuration it serves, computed once per configuration (a test that serves another one
 * gets another build). A run records the build it starts on, with its prompt source and the
 * tool lists of the configured Packs it is prepared with, each digested as tool-pins.ts
 * digests a tool list (names, descriptions, schemas), here of the list as the run keeps it.
 */
import type { DeploymentConfig } from '../../config/deployment-config.ts';
import { canonicalConfig } from '../../config/config-canonical.ts';
import { deploymentBuild, type DeploymentBuild } from '../../host/run-build.ts';
import type { PackSnapshot } from '../../host/remote/configured-packs.ts';
import { packIdOf } from '../../host/remote/mcp/mcp-pack.ts';
import { toolDefinitions } from '../../host/remote/mcp/tool-pins.ts';

const builds = new WeakMap<DeploymentConfig, Promise<DeploymentBuild>>();

/** The build of this Worker serving `config`. */
export function deploymentBuildOf(config: DeploymentConfig): Promise<DeploymentBuild> {
  let build = builds.get(config);
  if (!build) builds.set(config, (build = deploymentBuild({ config: canonicalConfig(config) })));
  return build;
}

/** Pack id -> `sha256:<hex>` of the tool list each snapshot keeps (a list the server did not give has no tools: its digest is the empty list's). */
export async function packDigests(snapshots: readonly PackSnapshot[]): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  for (const snapshot of snapshots) {
    const tools = snapshot.tools.ok ? snapshot.tools.tools : [];
    const definitions = await toolDefinitions(
      tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.parameters,
        ...(tool.outputSchema ? { outputSchema: true } : {}),
      })),
    );
    digests.set(packIdOf(snapshot.fqName), definitions.digest);
  }
  return digests;
}
