import { afterEach, describe, expect, it } from 'vitest';
import { anthropicMessages, anthropicProvider } from '../../src/models/anthropic.ts';
import { modelDirectory } from '../../src/models/directory.ts';
import { fastRounds, loopPrompt, modelServer, runLoop, toolResult, type Answer, type ModelServer } from './helpers.ts';

const KEY = 'sk-ant-test-0123456789';
const WRITER = '{ provider: anthropic, model: claude-test, temperature: 0.5 }';

/** A Messages API reply with these content blocks. */
const reply = (content: unknown[], usage?: { input_tokens: number; output_tokens: number }): Answer => ({
  json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: 'end_turn', ...(usage ? { usage } : {}) },
});

const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input });

const LOOP: Answer[] = [
  reply([{ type: 'text', text: 'Let me look.' }, use('c1', 'grab', { value: 'x' }), use('c2', 'stats_count', { text: 'abc' }), use('c3', 'stats_broken', {})], {
    input_tokens: 11,
    output_tokens: 6,
  }),
  reply(
    [
      { type: 'text', text: 'do' },
      { type: 'text', text: 'ne' },
    ],
    { input_tokens: 30, output_tokens: 1 },
  ),
];

const TOOLS = [
  {
    name: 'stats_count',
    description: 'Count the letters of a text',
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  { name: 'stats_broken', description: 'Always fails', input_schema: { type: 'object', properties: {} } },
  { name: 'grab', description: 'Grab a value', input_schema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } },
];

let server: ModelServer;
afterEach(() => server?.close());

async function serve(answers: Answer[], rounds = fastRounds()) {
  server = await modelServer(answers);
  return modelDirectory({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url }, {}, { round: rounds });
}

describe('the anthropic provider driving models.loop', () => {
  it('sends the system prompt apart, max_tokens 4096 by default, and every offered tool', async () => {
    const { outcome } = await runLoop(loopPrompt(WRITER), await serve(LOOP));
    expect(outcome).toMatchObject({ status: 'completed', result: 'done' });
    expect(server.bodies()[0]).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'Go.' }],
      tools: TOOLS,
      temperature: 0.5,
    });
  });

  it('sends the calls as tool_use blocks and their results as one user message in call order', async () => {
    const { outcome } = await runLoop(loopPrompt(WRITER), await serve(LOOP));
    const wrapped = toolResult(outcome, 'c3');
    expect(wrapped).toMatch(/<untrusted_input_[0-9a-f]{32}>\nstats: broken\n<\/untrusted_input_[0-9a-f]{32}>$/);
    expect(server.bodies()[1]).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'Go.' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me look.' },
            use('c1', 'grab', { value: 'x' }),
            use('c2', 'stats_count', { text: 'abc' }),
            use('c3', 'stats_broken', {}),
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: 'grabbed x' },
            { type: 'tool_result', tool_use_id: 'c2', content: '3 letters' },
            { type: 'tool_result', tool_use_id: 'c3', content: wrapped },
          ],
        },
      ],
      tools: TOOLS,
      temperature: 0.5,
    });
  });

  it('runs the batch and reports the usage of each round', async () => {
    const { outcome, calls } = await runLoop(loopPrompt(WRITER), await serve(LOOP));
    expect(calls.map((c) => c.tool)).toEqual(['stats/count', 'stats/broken']);
    expect(outcome.events.filter((e) => e.type === 'model_turn_completed').map((e) => e.usage)).toEqual([
      { input_tokens: 11, output_tokens: 6 },
      { input_tokens: 30, output_tokens: 1 },
    ]);
  });

  it('posts to {ANTHROPIC_BASE_URL}/v1/messages with x-api-key and anthropic-version', async () => {
    await runLoop(loopPrompt(WRITER), await serve(LOOP));
    const first = server.requests[0]!;
    expect([first.method, first.path, first.headers['x-api-key'], first.headers['anthropic-version'], first.headers.authorization]).toEqual([
      'POST',
      '/v1/messages',
      KEY,
      '2023-06-01',
      undefined,
    ]);
  });

  it("takes max_tokens from the role's config", async () => {
    await runLoop(loopPrompt('{ provider: anthropic, model: claude-test, max_tokens: 50 }'), await serve(LOOP));
    expect(server.bodies()[0]).toMatchObject({ max_tokens: 50 });
    expect(server.bodies()[0]).not.toHaveProperty('temperature');
  });
});

describe('the anthropic messages', () => {
  it('join every system record into the system prompt', () => {
    const { system, messages } = anthropicMessages([
      { role: 'system', content: 'One.' },
      { role: 'user', content: 'Hi.' },
      { role: 'system', content: 'Two.' },
    ]);
    expect(system).toBe('One.\n\nTwo.');
    expect(messages).toEqual([{ role: 'user', content: 'Hi.' }]);
  });

  it('leave out an empty text block and keep a user record after the results apart', () => {
    const { messages } = anthropicMessages([
      { role: 'user', content: 'Hi.' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'a', name: 'f', arguments: [] }] },
      { role: 'tool', content: 'r', tool_call_id: 'a' },
      { role: 'user', content: 'More.' },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: 'Hi.' },
      { role: 'assistant', content: [use('a', 'f', {})] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'r' }] },
      { role: 'user', content: 'More.' },
    ]);
  });
});

describe('a failed anthropic round', () => {
  const failure = async (answers: Answer[]) => {
    const { outcome } = await runLoop(loopPrompt(WRITER), await serve(answers));
    if (outcome.status !== 'failed') throw new Error(`the run completed: ${outcome.result}`);
    expect(outcome.error.kind).toBe('Model');
    return outcome.error.message;
  };

  it('names a refused key', async () => {
    const body = { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } };
    expect(await failure([{ status: 401, json: body }])).toBe(`anthropic: the API key was refused (HTTP 401): ${JSON.stringify(body)}`);
  });

  it('retries an overloaded server (529)', async () => {
    const { outcome } = await runLoop(
      loopPrompt(WRITER),
      await serve([{ status: 529, json: { type: 'error', error: { type: 'overloaded_error' } } }, ...LOOP]),
    );
    expect(outcome).toMatchObject({ status: 'completed', result: 'done' });
  });

  it('names a reply with no content blocks', async () => {
    expect(await failure([{ json: { type: 'message', content: [] } }])).toBe(
      'anthropic: the reply has no content blocks (HTTP 200): {"type":"message","content":[]}',
    );
  });

  it('names a body that is not JSON', async () => {
    expect(await failure([{ body: 'Service Unavailable', status: 200 }])).toBe('anthropic: the reply is not JSON (HTTP 200): Service Unavailable');
  });

  it('refuses a role without a key when the base address is Anthropic', async () => {
    const models = modelDirectory({});
    expect(models.provider({ provider: 'anthropic' }, 'writer')).toBe('role "writer" uses anthropic, which needs ANTHROPIC_API_KEY in the Host\'s environment');
  });

  it('keeps the key out of an excerpt', async () => {
    server = await modelServer([{ status: 400, json: { error: { message: `bad request for ${KEY}` } } }]);
    const outcome = await anthropicProvider({ apiKey: KEY, baseUrl: server.url, round: fastRounds() }).round({
      role: 'r',
      config: {},
      messages: [{ role: 'user', content: 'x' }],
      tools: null,
    });
    expect(outcome).toEqual({
      ok: false,
      message: 'anthropic: the provider refused the request (HTTP 400): {"error":{"message":"bad request for [redacted]"}}',
    });
  });
});
