/**
 * What else `/mcp` serves: progress of a call's run for a caller that sent a progress
 * token, runs' files as resources, runvil.yaml's mcp.tools naming the tools, and
 * `GET /mcp/tools` saying what is served and what is left out.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, json } from './app/client.ts';
import { GREET } from './app/prompts.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { EMPTY_CONFIG } from '../../src/config/deployment-config.ts';
import { mcpClient, type Era } from './mcp/mcp-client.ts';
import { TWO_ASKS } from './mcp/mcp-prompts.ts';

beforeAll(async () => {
  await json(await call('PUT', '/prompts/greet', { body: GREET }), 201);
  await json(await call('PUT', '/prompts/two-asks', { body: TWO_ASKS }), 201);
});

afterEach(() => replaceDeploymentConfig(null));

describe.each<Era>(['modern', 'legacy'])('a %s caller', (era) => {
  it("hears each section and ask of the call's run as progress when it sends a progress token", async () => {
    const messages: string[] = [];
    const client = await mcpClient(era);
    const result = await client.callTool({ name: 'two-asks', arguments: {} }, { onprogress: (progress) => void messages.push(progress.message ?? '') });
    await client.close();
    expect(result.structuredContent).toMatchObject({ status: 'suspended' });
    expect(messages).toEqual(['section Two asks', 'asks: Who owns the launch?']);
  });

  it("reads a run's files as resources: listed under runvil://runs/<id>/files/<path>, and read", async () => {
    const client = await mcpClient(era);
    const result = await client.callTool({ name: 'greet', arguments: { name: 'Res' } });
    const runId = result._meta?.['dev.runvil/run_id'] as string;
    const uri = `runvil://runs/${runId}/files/greeting.txt`;
    // The list reads the run index, which the run's outbox writes just after the run ends.
    let listed: { uri: string }[] = [];
    for (let i = 0; i < 200 && !listed.some((resource) => resource.uri === uri); i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      listed = (await client.listResources()).resources;
    }
    expect(listed).toEqual(expect.arrayContaining([expect.objectContaining({ uri, mimeType: 'text/plain' })]));
    expect((await client.readResource({ uri })).contents).toEqual([{ uri, mimeType: 'text/plain', text: 'hello Res' }]);
    await expect(client.readResource({ uri: `runvil://runs/${runId}/files/missing.txt` })).rejects.toThrow();
    await expect(client.readResource({ uri: `runvil://runs/${'0'.repeat(64)}/files/greeting.txt` })).rejects.toThrow();
    await client.close();
  });
});

describe("runvil.yaml's mcp.tools", () => {
  it('serves the prompts it names under its tool names, and GET /mcp/tools says what is left out and why', async () => {
    replaceDeploymentConfig({
      ...EMPTY_CONFIG,
      mcp: {
        tools: new Map([
          ['say_hello', 'greet'],
          ['gone', 'no-such-prompt'],
        ]),
      },
    });
    const client = await mcpClient('modern');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['say_hello']);
    expect((await client.callTool({ name: 'say_hello', arguments: { name: 'Map' } })).content).toEqual([{ type: 'text', text: 'hello Map x1' }]);
    await expect(client.callTool({ name: 'greet', arguments: {} })).rejects.toThrow(/Unknown tool: greet/);
    await client.close();
    const listing = await json(await call('GET', '/mcp/tools'), 200);
    expect(listing.served).toEqual([{ name: 'say_hello', prompt: 'greet', description: 'Greets in pure Lua.' }]);
    expect(listing.left_out).toEqual(
      expect.arrayContaining([
        { name: 'gone', prompt: 'no-such-prompt', reason: 'no prompt named no-such-prompt is deployed' },
        { name: 'two-asks', prompt: 'two-asks', reason: "runvil.yaml's mcp.tools does not name it" },
      ]),
    );
  });

  it('GET /mcp/tools needs admin, as the rest of the configuration does: a key without it gets 403 naming the scope', async () => {
    const reader = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'reader', scopes: ['runs:read', 'runs:start:*'] } }), 201);
    expect(await json(await call('GET', '/mcp/tools', { token: reader.key }), 403)).toMatchObject({ error: { scope: 'admin' } });
    const admin = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'operator', scopes: ['admin'] } }), 201);
    expect(await json(await call('GET', '/mcp/tools', { token: admin.key }), 200)).toHaveProperty('served');
  });
});
