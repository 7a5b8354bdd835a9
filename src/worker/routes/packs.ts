/**
 * `GET /packs` (API token): the Packs this deployment serves. The Host's own Packs with
 * their tools and whether they can serve (runvil/web needs a search provider), then each
 * Pack of runvil.yaml: its tools (an MCP Pack's as its server lists them now, or this
 * isolate's cached list), the tools a run would leave out and why, and whether it can
 * serve now and why not.
 */
import { Hono } from 'hono';
import { reportConfiguredPacks, type PackReport } from '../../host/remote/configured-packs.ts';
import { servicesOf } from '../../host/harness.ts';
import { OPERATOR_WINDOW_CLOSED } from '../../host/operator.ts';
import type { Pack, ServiceDirectory } from '../../host/pack.ts';
import { deploymentConfig } from '../deployment/deployment.ts';
import { textVars, type Env } from '../env.ts';
import { workerHost } from '../deployment/worker-host.ts';
import { requireScope } from '../http/auth.ts';

/** The Packs route. */
export const packRoutes = new Hono<{ Bindings: Env }>();

// The deployment's configuration, not a run's data: admin.
packRoutes.get('/packs', requireScope('admin'), async (c) => {
  // The listing asks no operator; the Host wants one all the same.
  const host = workerHost(c.env, { ask: async () => ({ ok: false, message: OPERATOR_WINDOW_CLOSED }) });
  const services = servicesOf(host.services);
  const own = host.packs.map((pack) => hostPackReport(pack, services));
  const configured = await reportConfiguredPacks(deploymentConfig(), textVars(c.env));
  return c.json({ packs: [...own, ...configured] });
});

/** What GET /packs says of one of the Host's own Packs. */
export function hostPackReport(pack: Pack, services: ServiceDirectory): PackReport {
  const { manifest } = pack;
  const missing = (manifest.services ?? []).find((service) => services.get(service) === undefined);
  const reason = missing !== undefined ? `needs ${missing}, and this host provides none` : (pack.unavailableReason?.(services) ?? null);
  return {
    name: manifest.fqName,
    id: manifest.fqName.slice(manifest.fqName.indexOf('/') + 1),
    description: manifest.description,
    source: 'runvil',
    trusted: null,
    available: reason === null,
    reason,
    tools: manifest.tools.map(({ id, description, output, trusted }) => ({ id, description, output, trusted })),
  };
}
