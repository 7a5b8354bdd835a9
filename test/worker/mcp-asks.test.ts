/**
 * An ask of a run becomes a question to the MCP caller: a 2026-07-28 caller gets
 * `input_required` and retries with its answer, a 2025-11-25 caller gets
 * `elicitation/create` on the call's stream; either way the SDK's client answers through
 * its elicitation handler, the run completes, and its asks were answered by `mcp:<client>`.
 * A caller that declines leaves the ask pending; a caller that cannot be asked gets the
 * pending ask (its answer URL and token) as the result.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, json } from './app/client.ts';
import { mcpClient, type Era } from './mcp/mcp-client.ts';
import { TWO_ASKS } from './mcp/mcp-prompts.ts';

beforeAll(async () => {
  await json(await call('PUT', '/prompts/two-asks', { body: TWO_ASKS }), 201);
});

/** The run a call's result names. */
async function runOf(result: { _meta?: Record<string, unknown> }): Promise<{ run_id: string; status: string; result: string | null }> {
  return json(await call('GET', `/runs/${result._meta?.['dev.runvil/run_id']}`), 200);
}

/** Who answered each ask of run `runId`, in the order answered: its `ask_answered` events (the run has ended, so its stream does). */
async function answeredBy(runId: string): Promise<(string | null)[]> {
  const text = await (await call('GET', `/runs/${runId}/events`)).text();
  const events = text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as { type: string; answered_by?: string | null });
  return events.filter((event) => event.type === 'ask_answered').map((event) => event.answered_by ?? null);
}

/** The run as GET /runs lists it and who answered its asks as GET /asks does, once the run's index rows are written (just after it ends). */
async function indexed(runId: string): Promise<{ status: string; answeredBy: (string | null)[] }> {
  for (let i = 0; ; i++) {
    const { runs } = await json<{ runs: { run_id: string; status: string }[] }>(await call('GET', '/runs?prompt=two-asks&limit=200'), 200);
    const { asks } = await json<{ asks: { run_id: string; ask_id: string; answered_by: string | null }[] }>(
      await call('GET', '/asks?prompt=two-asks&status=answered&limit=200'),
      200,
    );
    const run = runs.find((row) => row.run_id === runId);
    const answered = asks.filter((ask) => ask.run_id === runId).sort((a, b) => (a.ask_id < b.ask_id ? -1 : 1));
    if ((run?.status === 'completed' && answered.length === 2) || i === 500)
      return { status: run?.status ?? 'absent', answeredBy: answered.map((ask) => ask.answered_by) };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each<Era>(['modern', 'legacy'])('a %s caller that elicits', (era) => {
  it('is asked each question in turn, and its answers complete the run, answered by mcp:<its name>', async () => {
    const asked: { message: string; requestedSchema: unknown }[] = [];
    const client = await mcpClient(era, {
      name: `agent-${era}`,
      elicit: ({ message, requestedSchema }) => {
        asked.push({ message, requestedSchema });
        return { action: 'accept', content: { answer: asked.length === 1 ? 'Ada' : 'tomorrow' } };
      },
    });
    const result = await client.callTool({ name: 'two-asks', arguments: {} });
    await client.close();
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'Ada ships tomorrow' }] });
    expect(asked).toEqual([
      {
        message: 'Who owns the launch?',
        requestedSchema: {
          type: 'object',
          properties: { answer: { type: 'string', title: 'Answer', description: 'Your answer, as text' } },
          required: ['answer'],
        },
      },
      {
        message: 'When does it ship?',
        requestedSchema: { type: 'object', properties: { answer: { type: 'string', title: 'Answer', enum: ['today', 'tomorrow'] } }, required: ['answer'] },
      },
    ]);
    const run = await runOf(result);
    expect(run).toMatchObject({ status: 'completed', result: 'Ada ships tomorrow' });
    expect(await answeredBy(run.run_id)).toEqual([`mcp:agent-${era}`, `mcp:agent-${era}`]);
    expect(await indexed(run.run_id)).toEqual({ status: 'completed', answeredBy: [`mcp:agent-${era}`, `mcp:agent-${era}`] });
  });

  it('leaves the ask pending when the caller declines, and answers with the pending ask', async () => {
    const client = await mcpClient(era, { elicit: () => ({ action: 'decline' }) });
    const result = await client.callTool({ name: 'two-asks', arguments: { topic: 'the beta' } });
    await client.close();
    const run = await runOf(result);
    expect(run.status).toBe('suspended');
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({
      run_id: run.run_id,
      status: 'suspended',
      pending: [
        {
          kind: 'ask',
          question: 'Who owns the beta?',
          answer_url: expect.stringContaining(`/runs/${run.run_id}/asks/`),
          token: expect.stringMatching(/^[0-9a-f]{64}$/),
        },
      ],
    });
  });
});

describe.each<Era>(['modern', 'legacy'])('a %s caller that cannot be asked', (era) => {
  it('gets the pending ask as the result: question, choices, answer URL and token, so a person can answer elsewhere', async () => {
    const client = await mcpClient(era);
    const result = await client.callTool({ name: 'two-asks', arguments: {} });
    await client.close();
    const run = await runOf(result);
    expect(run.status).toBe('suspended');
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text).toContain('Who owns the launch?');
    expect(text).toContain(`/runs/${run.run_id}/asks/`);
    expect(result.structuredContent).toMatchObject({ run_id: run.run_id, pending: [{ question: 'Who owns the launch?', choices: null }] });
  });
});
