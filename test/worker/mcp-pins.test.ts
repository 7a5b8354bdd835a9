/**
 * Pinned tool definitions in workerd (DESIGN.md Part 3, "MCP servers of the 2026-07-28
 * protocol"), against the 2026-07-28 test server (modern-mcp.setup.ts), whose tool list a
 * test switches: the definitions first seen are pinned in KV; a server that then changes a
 * tool refuses new runs naming it, while a run prepared before goes on; GET /packs shows the
 * change and the digest to pin; the root, and no key, accepts it.
 */
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import type { KvNamespace } from '../../src/worker/platform-types.ts';
import { call, json, settled, until } from './app/client.ts';

const modern = inject('modernMcp');

// A slot of the server's own: other files that run at the same time use its other endpoints.
const SLOT_URL = `${modern.origin}/s/pins/mcp`;

async function variant(name: string): Promise<void> {
  const response = await fetch(`${modern.origin}/s/pins/variant/${name}`, { method: 'POST' });
  expect(response.status).toBe(204);
  clearMcpToolListCache();
}

function configure(extra = ''): void {
  const parsed = parseDeploymentConfig(`packs:\n  acme/modern:\n    mcp: { url: "${SLOT_URL}" }\n${extra}`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
}

const PROMPT = `---
name: pinned
description: Asks whether to go on, then calls echo.
runvil: 0
uses: [acme/modern, user-input]
args:
  ask: { type: boolean, default: false }
---

# Pinned

## Call

\`\`\`lua
local go = args.ask and tools.call('user-input/ask', { question = 'go on?' }) or 'yes'
return go .. ': ' .. tools.call('modern/echo', { text = 'hi' })
\`\`\`
`;

const UNPINNED = `---
name: unpinned
description: Declares no MCP Pack; a fork's source may.
runvil: 0
uses: [user-input]
---

# Unpinned

## Call

\`\`\`lua
return 'plain'
\`\`\`
`;

async function start(ask: boolean): Promise<string> {
  return (await json<{ run_id: string }>(await call('POST', '/prompts/pinned/runs', { body: { args: { ask } } }), 202)).run_id;
}

interface PackReport {
  name: string;
  available: boolean;
  reason: string | null;
  tools: { id: string; description: string }[];
  pin?: { digest: string; pinned: string | null; changed: string[] };
}

async function modernReport(): Promise<PackReport> {
  const { packs } = await json<{ packs: PackReport[] }>(await call('GET', '/packs'), 200);
  return packs.find((pack) => pack.name === 'acme/modern')!;
}

beforeAll(async () => {
  await json(await call('PUT', '/prompts/pinned', { body: PROMPT }), 201);
});
beforeEach(async () => {
  configure();
  await variant('base');
  // Each test starts before the first sight of the server: nothing pinned.
  await (env as unknown as { RUNVIL_KV: KvNamespace }).RUNVIL_KV.delete('pins/acme/modern');
});
afterAll(async () => {
  replaceDeploymentConfig(null);
  await variant('base');
});

describe('the tools of an MCP Pack, pinned in workerd', () => {
  it('refuses new runs naming the tool whose description changed; the run in flight goes on; the root accepts the change', async () => {
    const first = await modernReport();
    expect(first).toMatchObject({ available: true, pin: { pinned: first.pin!.digest, changed: [] } });

    const inFlight = await start(true);
    const waiting = await until(inFlight, (view) => view.status !== 'running');
    expect(waiting.status).toBe('suspended');

    await variant('description');
    const refused = await settled(await start(false));
    expect(refused.status).toBe('failed');
    expect(refused.error!.message).toBe('the environment cannot satisfy this prompt:\n- modern is unavailable: its tools changed since they were pinned: echo');
    const changed = await modernReport();
    expect(changed).toMatchObject({
      available: false,
      reason: 'its tools changed since they were pinned: echo',
      pin: { pinned: first.pin!.digest, changed: ['echo'] },
    });
    expect(changed.pin!.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(changed.pin!.digest).not.toBe(first.pin!.digest);

    // The run prepared before the change keeps the tools it was prepared with.
    await json(await call('POST', `/runs/${inFlight}/asks/${waiting.pending[0]!.ask_id}`, { body: { answer: 'yes' } }), 200);
    expect(await settled(inFlight)).toMatchObject({ status: 'completed' });

    // A key, even admin, cannot accept; the root can.
    const key = (await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'admin', scopes: ['admin'] } }), 201)).key;
    expect((await call('POST', '/packs/acme/modern/accept', { token: key })).status).toBe(403);
    const accepted = await json(await call('POST', '/packs/acme/modern/accept'), 200);
    expect(accepted).toEqual({ name: 'acme/modern', digest: changed.pin!.digest, tools: ['asks-twice', 'echo'], changed: ['echo'] });
    clearMcpToolListCache();
    expect(await settled(await start(false))).toMatchObject({ status: 'completed', result: expect.stringContaining('echo: hi') });
  });

  it('does not count the same tools in another order as a change', async () => {
    expect(await settled(await start(false))).toMatchObject({ status: 'completed' });
    await variant('reordered');
    expect(await settled(await start(false))).toMatchObject({ status: 'completed' });
    expect(await modernReport()).toMatchObject({ available: true, pin: { changed: [] } });
  });

  it("holds runvil.yaml's pin:, which accepting cannot change", async () => {
    const { pin } = await modernReport();
    configure(`    pin: ${pin!.digest}\n`);
    expect(await settled(await start(false))).toMatchObject({ status: 'completed' });
    await variant('added');
    expect((await settled(await start(false))).error!.message).toBe(
      'the environment cannot satisfy this prompt:\n- modern is unavailable: its tools changed since they were pinned: extra',
    );
    const refused = await call('POST', '/packs/acme/modern/accept');
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('set its pin: to sha256:');
  });

  it('refuses a fork whose source declares a Pack whose tools changed, as it refuses a new run', async () => {
    await json(await call('PUT', '/prompts/unpinned', { body: UNPINNED }), 201);
    expect(await modernReport()).toMatchObject({ available: true });
    const original = (await json<{ run_id: string }>(await call('POST', '/prompts/unpinned/runs', { body: {} }), 202)).run_id;
    expect(await settled(original)).toMatchObject({ status: 'completed', result: 'plain' });

    await variant('description');
    // The original kept no MCP Pack: the fork reads acme/modern afresh, and judges it against its pin.
    const source = UNPINNED.replace('uses: [user-input]', 'uses: [acme/modern]').replace("return 'plain'", "return tools.call('modern/echo', { text = 'hi' })");
    const fork = await json<{ run_id: string }>(await call('POST', `/runs/${original}/fork`, { body: { at: 0, source } }), 202);
    const refused = await settled(fork.run_id);
    expect(refused.status).toBe('failed');
    expect(refused.error!.message).toBe('the environment cannot satisfy this prompt:\n- modern is unavailable: its tools changed since they were pinned: echo');
  });

  it('answers 404 for accepting a Pack runvil.yaml does not configure', async () => {
    expect((await call('POST', '/packs/acme/nothing/accept')).status).toBe(404);
  });
});
