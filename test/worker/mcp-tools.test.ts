/**
 * `/mcp` with the SDK's client, in both eras: tools/list lists the deployed prompts with an
 * inputSchema from their args, tools/call runs one and answers with its result, a failed
 * run or args that do not fit are tool errors, an unknown tool a protocol error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { call, json } from './app/client.ts';
import { GREET } from './app/prompts.ts';
import { mcpClient, type Era } from './mcp/mcp-client.ts';

const FAILS = `---
name: fails
description: Fails at once.
runvil: 0
---
# Fails

\`\`\`lua
error('the ledger is closed')
\`\`\`
`;

beforeAll(async () => {
  await json(await call('PUT', '/prompts/greet', { body: GREET }), 201);
  await json(await call('PUT', '/prompts/fails', { body: FAILS }), 201);
});

describe.each<Era>(['modern', 'legacy'])('a %s client', (era) => {
  let client: Client;
  beforeAll(async () => {
    client = await mcpClient(era);
  });
  afterAll(async () => client.close());

  it('lists every deployed prompt as a tool named by the prompt, with its description and an inputSchema from its args', async () => {
    const { tools } = await client.listTools();
    const greet = tools.find((tool) => tool.name === 'greet');
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['fails', 'greet']));
    expect(greet).toMatchObject({
      description: 'Greets in pure Lua.',
      inputSchema: {
        type: 'object',
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        properties: { name: { type: 'string', default: 'world' }, times: { type: 'integer', default: 1 } },
        additionalProperties: false,
      },
    });
  });

  it('runs the prompt and answers with its result as text', async () => {
    const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada', times: 2 } });
    expect(result.isError ?? false).toBe(false);
    expect(result.content).toEqual([{ type: 'text', text: 'hello Ada x2' }]);
  });

  it('answers args that do not fit the prompt as a tool error naming the arg', async () => {
    const result = await client.callTool({ name: 'greet', arguments: { times: 'many' } });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('times') }]);
  });

  it("answers a failed run as a tool error with the run error's message", async () => {
    const result = await client.callTool({ name: 'fails', arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('the ledger is closed');
  });

  it('refuses an unknown tool with a protocol error', async () => {
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool: nope/);
  });
});
