/**
 * `input_required` (MCP 2026-07-28) in workerd, against the 2026-07-28 test server
 * (modern-mcp.setup.ts), on a slot of its own: a tool that asks twice (a name, then a colour
 * from an enum) suspends the run on a form ask each round (the requested schema as it stands),
 * listed in GET /asks; the round's request state is kept in the run's storage, so with the
 * server restarted and the run object evicted between the rounds, and the answer given an
 * hour later (of a fake clock), the retry goes with the kept state and the call is never sent again from its
 * start; an answer outside the enum is refused at the ask; `decline` is an answer. A 2025-11-25
 * server's elicitation held on the open call cannot outlive the object: the call fails saying so.
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { HELD_QUESTION_LOST, MAX_INPUT_REQUESTS, MAX_INPUT_ROUNDS, MAX_REQUEST_STATE_CHARS } from '../../src/host/remote/mcp/mcp-input-rounds.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { call, json, kvRecord, settled, until } from './app/client.ts';
import { dropObjects } from './app/test-worker.ts';

const modern = inject('modernMcp');
const legacy = inject('mcp');
const SLOT = `${modern.origin}/s/rounds`;
/** How long after its ask the last round is answered. */
const LATER_MS = 59 * 60_000;
const HOSTILE = `${modern.origin}/s/rounds-hostile`;

const prompt = (name: string, uses: string, lua: string) => `---
name: ${name}
description: Calls a tool that asks.
runvil: 0
uses: [${uses}]
---

# Asks

## Call

\`\`\`lua
${lua}
\`\`\`
`;

beforeAll(async () => {
  await fetch(`${HOSTILE}/variant/hostile`, { method: 'POST' });
  const parsed = parseDeploymentConfig(
    `packs:\n  acme/modern:\n    mcp: { url: "${SLOT}/mcp" }\n  acme/hostile:\n    mcp: { url: "${HOSTILE}/mcp" }\n  everything/legacy:\n    mcp: { url: "${legacy.url}" }\n`,
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
  await json(await call('PUT', '/prompts/asks-twice', { body: prompt('asks-twice', 'acme/modern', "return tools.call('modern/asks-twice', {})") }), 201);
  const legacyCall = "local ok, out = pcall(tools.call, 'legacy/trigger-elicitation-request', {})\nreturn ok and out or tostring(out)";
  await json(await call('PUT', '/prompts/asks-legacy', { body: prompt('asks-legacy', 'everything/legacy', legacyCall) }), 201);
  const hostileCall = "local ok, out = pcall(tools.call, 'hostile/asks-hostile', { attack = args.attack })\nreturn ok and out or tostring(out)";
  const hostile = prompt('asks-hostile', 'acme/hostile', hostileCall).replace(
    'uses: [acme/hostile]',
    'uses: [acme/hostile]\nargs:\n  attack: { type: string }',
  );
  await json(await call('PUT', '/prompts/asks-hostile', { body: hostile }), 201);
});
afterAll(() => replaceDeploymentConfig(null));
afterEach(() => vi.useRealTimers());

async function start(name = 'asks-twice'): Promise<string> {
  await fetch(`${SLOT}/calls`, { method: 'DELETE' });
  return (await json<{ run_id: string }>(await call('POST', `/prompts/${name}/runs`, { body: { args: {} } }), 202)).run_id;
}

/** The tools/call requests the slot's server got, in order. */
async function callsSeen(): Promise<{ requestState: string | null; inputResponses: string[]; generation: number }[]> {
  return (await fetch(`${SLOT}/calls`)).json();
}

const NAME_FORM = { type: 'object', properties: { name: { type: 'string', description: 'Your name' } }, required: ['name'] };
const COLOUR_FORM = { type: 'object', properties: { colour: { type: 'string', enum: ['red', 'green', 'blue'] } }, required: ['colour'] };

describe('a tool that answers input_required twice, in the run object', () => {
  it('waits on a form ask each round; evicted, the server restarted, answered an hour later, it retries with the kept state', async () => {
    const runId = await start();
    const first = await until(runId, (view) => view.status !== 'running');
    expect(first.status).toBe('suspended');
    expect(first.pending).toEqual([
      expect.objectContaining({ kind: 'ask', ask_id: '0-1', question: 'Who is asking?', form: NAME_FORM, choices: null, refusals: ['decline', 'cancel'] }),
    ]);
    // The index shows an ask soon after it is made, not at once: polled, as the inbox's tests do.
    for (let i = 0; ; i++) {
      const listed = await json<{ asks: { run_id: string; ask_id: string; form: unknown }[] }>(
        await call('GET', '/asks?status=pending&prompt=asks-twice'),
        200,
      );
      const ask = listed.asks.find((listedAsk) => listedAsk.run_id === runId);
      if (ask || i > 300) {
        expect(ask).toMatchObject({ ask_id: '0-1', form: NAME_FORM });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await json(await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: { name: 'Ada' } } }), 200);

    const second = await until(runId, (view) => view.status === 'suspended' && view.pending.some((ask) => ask.ask_id === '0-1.1'));
    expect(second.pending).toEqual([expect.objectContaining({ ask_id: '0-1.1', question: 'Which colour, Ada?', form: COLOUR_FORM })]);
    // The answer outside the enum is refused at the ask, naming the field; the server never sees it.
    const refused = await call('POST', `/runs/${runId}/asks/0-1.1`, { body: { answer: { colour: 'purple' } } });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { form_field: 'colour' } });

    // Between the rounds: the server restarts, the object loses its memory, and an hour passes
    // (59 minutes: the test Worker's run limit, RUNVIL_RUN_TIMEOUT_SECONDS, is an hour).
    await fetch(`${SLOT}/restart`, { method: 'POST' });
    await dropObjects();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + LATER_MS);
    await json(await call('POST', `/runs/${runId}/asks/0-1.1`, { body: { answer: { colour: 'green' } } }), 200);
    vi.useRealTimers();
    const done = await settled(runId);
    expect(done.status).toBe('completed');
    expect(done.result).toContain('Ada likes green');

    // The call, then one retry a round: after the eviction the retry went with the kept state to
    // the restarted server, and the call was never sent again from its start.
    const seen = await callsSeen();
    expect(seen.map(({ inputResponses, generation }) => ({ inputResponses, generation }))).toEqual([
      { inputResponses: [], generation: seen[0]!.generation },
      { inputResponses: ['name'], generation: seen[0]!.generation },
      { inputResponses: ['colour'], generation: seen[0]!.generation + 1 },
    ]);
    expect(JSON.parse(atob(seen[2]!.requestState!.replace(/-/g, '+').replace(/_/g, '/')))).toEqual({ name: 'Ada' });
    // The answer came an hour (of the object's clock) after the ask.
    const { events } = await kvRecord<{ events: { type: string; ask_id?: string; at: string }[] }>(runId);
    const at = (type: string) => Date.parse(events.find((event) => event.type === type && event.ask_id === '0-1.1')!.at);
    expect(at('ask_answered') - at('ask_pending')).toBeGreaterThanOrEqual(LATER_MS);
  });

  it('sends decline when the operator answers decline, a word the form ask takes', async () => {
    const runId = await start();
    await until(runId, (view) => view.status === 'suspended');
    await json(await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'decline' } }), 200);
    expect((await settled(runId)).result).toContain('declined');
  });

  it('refuses any other text for a form ask, naming the words it takes', async () => {
    const runId = await start();
    await until(runId, (view) => view.status === 'suspended');
    const refused = await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'Ada' } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('or one of "decline", "cancel" to refuse it');
    await json(await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'cancel' } }), 200);
    expect((await settled(runId)).result).toContain('cancelled');
  });
});

describe('a hostile server answering input_required, in the run object', () => {
  const attack = async (name: string) => {
    const runId = (await json<{ run_id: string }>(await call('POST', '/prompts/asks-hostile/runs', { body: { args: { attack: name } } }), 202)).run_id;
    return settled(runId);
  };

  it(`fails a call whose rounds ask nothing but never end, at the ${MAX_INPUT_ROUNDS + 1}th round`, async () => {
    const done = await attack('endless-silent');
    expect(done.status).toBe('completed');
    expect(done.result).toContain(`input_required came ${MAX_INPUT_ROUNDS + 1} times in one call; a call takes at most ${MAX_INPUT_ROUNDS} rounds`);
  });

  it('refuses a request state past the cap, and a schema that is no form, without asking', async () => {
    expect((await attack('huge-state')).result).toContain(`a round keeps at most ${MAX_REQUEST_STATE_CHARS}`);
    expect((await attack('pattern')).result).toContain('form.properties.text.pattern is not part of');
    expect((await attack('many-requests')).result).toContain(`a round makes at most ${MAX_INPUT_REQUESTS}`);
  });
});

describe("a 2025-11-25 server's elicitation", () => {
  it('that the object cannot hold (evicted while the call was open) fails the call saying so', async () => {
    const runId = await start('asks-legacy');
    const waiting = await until(runId, (view) => view.status !== 'running');
    expect(waiting.status).toBe('suspended');
    expect(waiting.pending[0]!.form).toMatchObject({ required: ['name'] });
    await dropObjects();
    await json(await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: { name: 'Grace Hopper' } } }), 200);
    const done = await settled(runId);
    expect(done.result).toContain(HELD_QUESTION_LOST);
  });
});
