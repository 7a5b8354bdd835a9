/**
 * An ask with a form is asked of the MCP caller with the form as the elicitation's schema,
 * as it stands; the filled object answers it, checked against the form.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, getRun, json } from './app/client.ts';
import { mcpClient, type Era } from './mcp/mcp-client.ts';
import { FORM_ASK, SHIP_FORM } from './mcp/mcp-prompts.ts';
import { rawCallTool } from './mcp/mcp-raw.ts';

beforeAll(async () => {
  await json(await call('PUT', '/prompts/form-ask', { body: FORM_ASK }), 201);
});

describe.each<Era>(['modern', 'legacy'])('a %s caller that elicits', (era) => {
  it("gets the ask's form as the requested schema, and its filled object completes the run", async () => {
    const asked: unknown[] = [];
    const client = await mcpClient(era, {
      elicit: ({ requestedSchema }) => {
        asked.push(requestedSchema);
        return { action: 'accept', content: { owner: 'Ada', days: 3, channel: 'chat' } };
      },
    });
    const result = await client.callTool({ name: 'form-ask', arguments: {} });
    await client.close();
    expect(asked).toEqual([SHIP_FORM]);
    expect(result.content).toEqual([{ type: 'text', text: 'Ada in 3 days' }]);
  });
});

describe('a filled form that does not fit', () => {
  it.each([
    [{ owner: 'Ada' }, 'days'],
    [{ owner: 'Ada', days: 99 }, 'days'],
    [{ owner: 'Ada', days: 2, channel: 'fax' }, 'channel'],
    [{ owner: 'Ada', days: 2, extra: true }, 'extra'],
  ])('is refused naming the field (%j), and the ask stays pending', async (content, field) => {
    const first = await rawCallTool('form-ask', {});
    const key = Object.keys(first.result.inputRequests)[0]!;
    expect(first.result.inputRequests[key].params.requestedSchema).toEqual(SHIP_FORM);
    const refused = await rawCallTool('form-ask', {}, { requestState: first.result.requestState, inputResponses: { [key]: { action: 'accept', content } } });
    expect(refused.error).toMatchObject({ code: -32602, data: { field } });
    expect((await getRun(first.result._meta['dev.runvil/run_id'])).status).toBe('suspended');
  });
});
