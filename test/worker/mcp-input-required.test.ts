/**
 * `input_required` (MCP 2026-07-28) in workerd, against the 2026-07-28 test server
 * (modern-mcp.setup.ts): a tool that asks twice (a name, then a colour from an enum) suspends
 * the run on an operator ask each round, listed in GET /asks; the run object evicted between
 * the rounds comes back on the answer and the call goes on to the server's result.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { call, json, settled, until } from './app/client.ts';
import { dropObjects } from './app/test-worker.ts';

const modern = inject('modernMcp');

const PROMPT = `---
name: asks-twice
description: Calls a tool that asks twice.
runvil: 0
uses: [acme/modern]
---

# Asks

## Call

\`\`\`lua
return tools.call('modern/asks-twice', {})
\`\`\`
`;

beforeAll(async () => {
  const parsed = parseDeploymentConfig(`packs:\n  acme/modern:\n    mcp: { url: "${modern.url}" }\n`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
  await json(await call('PUT', '/prompts/asks-twice', { body: PROMPT }), 201);
});
afterAll(() => replaceDeploymentConfig(null));

async function start(): Promise<string> {
  return (await json<{ run_id: string }>(await call('POST', '/prompts/asks-twice/runs', { body: { args: {} } }), 202)).run_id;
}

describe('a tool that answers input_required twice, in the run object', () => {
  it('suspends the run on an ask each round, listed in /asks, and survives the object evicted between the rounds', async () => {
    const runId = await start();
    const first = await until(runId, (view) => view.status !== 'running');
    expect(first.status).toBe('suspended');
    expect(first.pending).toEqual([expect.objectContaining({ kind: 'ask', ask_id: '0-1', question: 'Who is asking?\n\nname: Your name' })]);
    // The index shows an ask soon after it is made, not at once: polled, as the inbox's tests do.
    for (let i = 0; ; i++) {
      const listed = await json<{ asks: { run_id: string; ask_id: string }[] }>(await call('GET', '/asks?status=pending&prompt=asks-twice'), 200);
      const ask = listed.asks.find((listedAsk) => listedAsk.run_id === runId);
      if (ask || i > 300) {
        expect(ask).toMatchObject({ ask_id: '0-1' });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await json(await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'Ada' } }), 200);

    const second = await until(runId, (view) => view.status === 'suspended' && view.pending.some((ask) => ask.ask_id === '0-1.1'));
    expect(second.pending).toEqual([expect.objectContaining({ ask_id: '0-1.1', choices: ['red', 'green', 'blue'] })]);
    // The object loses its memory while the operator thinks; the answer brings the run back.
    await dropObjects();
    await json(await call('POST', `/runs/${runId}/asks/0-1.1`, { body: { answer: 'green' } }), 200);
    const done = await settled(runId);
    expect(done.status).toBe('completed');
    expect(done.result).toContain('Ada likes green');
  });

  it('refuses at the ask an answer outside the enum, and sends the choice taken', async () => {
    const runId = await start();
    await until(runId, (view) => view.status === 'suspended');
    await json(await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'Ada' } }), 200);
    await until(runId, (view) => view.status === 'suspended' && view.pending.some((ask) => ask.ask_id === '0-1.1'));
    // The ask itself refuses an answer outside its choices; the server never sees one.
    expect((await call('POST', `/runs/${runId}/asks/0-1.1`, { body: { answer: 'purple' } })).status).toBe(400);
    await json(await call('POST', `/runs/${runId}/asks/0-1.1`, { body: { answer: 'red' } }), 200);
    expect((await settled(runId)).result).toContain('Ada likes red');
  });
});
