/**
 * `GET /packs` (API token): the Packs this deployment serves. The Host's own Packs with
 * their tools and whether they can serve (runvil/web needs a search provider), then each
 * Pack of runvil.yaml: its tools (an MCP Pack's as its server lists them now, or this
 * isolate's cached list), the tools a run would leave out and why, and whether it can
 * serve now and why not, with its pinned tool definitions (the digest now, the pinned one,
 * the tools that changed). `POST /packs/<vendor>/<name>/accept` (the root only) accepts the
 * definitions an MCP Pack's server lists now as its pin (kept in KV).
 */
import { Hono } from 'hono';
import { acceptPackTools, reportConfiguredPacks, type PackReport } from '../../host/remote/configured-packs.ts';
import { keyValuePinStore } from '../../host/remote/mcp/tool-pins.ts';
import { servicesOf } from '../../host/harness.ts';
import { OPERATOR_WINDOW_CLOSED } from '../../host/operator.ts';
import type { Pack, ServiceDirectory } from '../../host/pack.ts';
import { deploymentConfig } from '../deployment/deployment.ts';
import { textVars, type Env } from '../env.ts';
import { workerHost } from '../deployment/worker-host.ts';
import { requireRoot, requireScope } from '../http/auth.ts';
import { ApiError } from '../http/http-error.ts';

/** The Packs route. */
export const packRoutes = new Hono<{ Bindings: Env }>();

// The deployment's configuration, not a run's data: admin.
packRoutes.get('/packs', requireScope('admin'), async (c) => {
  // The listing asks no operator; the Host wants one all the same.
  const host = workerHost(c.env, { ask: async () => ({ ok: false, message: OPERATOR_WINDOW_CLOSED }) });
  const services = servicesOf(host.services);
  const own = host.packs.map((pack) => hostPackReport(pack, services));
  const configured = await reportConfiguredPacks(deploymentConfig(), textVars(c.env), undefined, keyValuePinStore(c.env.RUNVIL_KV));
  return c.json({ packs: [...own, ...configured] });
});

// Trusting a server's new tool definitions is the deployment owner's call: the root only.
packRoutes.post('/packs/:vendor/:name/accept', requireRoot, async (c) => {
  const fqName = `${c.req.param('vendor')}/${c.req.param('name')}`;
  const outcome = await acceptPackTools(deploymentConfig(), fqName, textVars(c.env), keyValuePinStore(c.env.RUNVIL_KV));
  if (!outcome.ok) throw new ApiError(outcome.kind === 'NotFound' ? 404 : 409, outcome.message);
  return c.json({ name: fqName, digest: outcome.digest, tools: outcome.tools, changed: outcome.changed });
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
