/**
 * A call in `input_required` rounds (mcp-input-rounds.ts) over a scripted server: the rounds
 * the SDK's own server refuses to send (a round with neither requests nor state, a sampling
 * request, a URL elicitation, a state that is not text) are refused before anything is asked;
 * a call whose round was kept by an earlier execution sends the retry with the kept state,
 * never the call from its start; and a call whose 2025-11-25 question was held on a
 * connection that is gone fails saying so. The rounds against a real server process are
 * test/host/mcp-input-required.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCallRounds } from '../../src/host/call-rounds.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import type { ToolContext } from '../../src/host/pack.ts';
import type { CallResult, RoundRetry } from '../../src/host/remote/mcp/mcp-connection.ts';
import { callInRounds, HELD_QUESTION_LOST } from '../../src/host/remote/mcp/mcp-input-rounds.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import type { Json } from '../../src/json/json.ts';

const EFFECT = { chain: '0', seq: 3 };
const ASK_NAME = {
  method: 'elicitation/create',
  params: { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
};

/** A call whose server answers `answers` in turn; what was sent, and how the call ended. */
async function callWith(answers: CallResult[], operatorAnswers: Json[] = [], rounds = new MemoryCallRounds()) {
  const sent: (RoundRetry | undefined)[] = [];
  const context: ToolContext = {
    runId: 'run-1',
    store: new MemoryRunStore(),
    operator: new ScriptedOperator(operatorAnswers),
    services: { get: () => undefined },
    effect: EFFECT,
    rounds,
  };
  const outcome = await callInRounds(
    {
      send: async (retry) => {
        sent.push(retry);
        const answer = answers.shift();
        if (!answer) throw new Error('the scripted server has nothing more to say');
        return answer;
      },
      waiting: (work) => work(),
    },
    context,
  );
  return { outcome, sent, rounds };
}

const inputRequired = (inputRequests: unknown, requestState?: unknown): CallResult => ({
  inputRequired: { inputRequests, ...(requestState !== undefined ? { requestState } : {}) },
});
const refusal = async (answer: CallResult) => {
  const { outcome, sent } = await callWith([answer]);
  expect(sent).toHaveLength(1);
  return 'refused' in outcome ? outcome.refused : `not refused: ${JSON.stringify(outcome)}`;
};

describe('a round the SDK server would not send', () => {
  it('with neither an input request nor a state is refused: there is nothing to send back', async () => {
    expect(await refusal(inputRequired({}))).toContain('asks for nothing and carries no request state');
    expect(await refusal(inputRequired(undefined))).toContain('asks for nothing and carries no request state');
  });

  it('asking for sampling, roots or a URL elicitation is refused, naming its key', async () => {
    for (const request of [
      { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
      { method: 'roots/list' },
      { method: 'elicitation/create', params: { mode: 'url', message: 'Open this', url: 'https://example.test/', elicitationId: 'e1' } },
      'not a request',
      null,
    ]) {
      expect(await refusal(inputRequired({ sneaky: request }, 's'))).toContain('asks ("sneaky") for what Runvil\'s MCP Packs do not offer');
    }
  });

  it('with a state that is not text, or requests that are not an object, is refused', async () => {
    expect(await refusal(inputRequired({ q: ASK_NAME }, { a: 1 }))).toContain('a request state that is not text');
    expect(await refusal(inputRequired([ASK_NAME], 's'))).toContain('input requests that are not an object');
  });

  it('with a message past the cap on a question is refused', async () => {
    const long = { ...ASK_NAME, params: { ...ASK_NAME.params, message: 'x'.repeat(9_000) } };
    expect(await refusal(inputRequired({ q: long }, 's'))).toContain('the question is 9000 characters long');
  });
});

describe('a call whose round an earlier execution kept', () => {
  it('sends the retry with the kept state and the answer, not the call again, and numbers its asks on', async () => {
    const rounds = new MemoryCallRounds();
    rounds.put(EFFECT, { rounds: 2, asked: 1, last: { request_state: 'kept', input_requests: { name: ASK_NAME } as unknown as Json } });
    const { outcome, sent } = await callWith([{ content: [{ type: 'text', text: 'done' }] }], [{ name: 'Ada' }], rounds);
    expect(outcome).toEqual({ result: { content: [{ type: 'text', text: 'done' }] } });
    expect(sent).toEqual([{ requestState: 'kept', inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } }]);
  });

  it('keeps each new round before asking, so a later execution starts from it', async () => {
    const cancelled = { content: [{ type: 'text', text: 'cancelled' }] };
    const { sent, rounds } = await callWith(
      [inputRequired({ name: ASK_NAME }, 'one'), inputRequired({ again: ASK_NAME }, 'two'), cancelled],
      [{ name: 'Ada' }],
    );
    // No one answered the second round's ask: its retry says cancel.
    expect(sent[2]).toEqual({ requestState: 'two', inputResponses: { again: { action: 'cancel' } } });
    expect(rounds.get(EFFECT)).toEqual({ rounds: 2, asked: 1, last: { request_state: 'two', input_requests: { again: ASK_NAME } } });
  });

  it('of a 2025-11-25 question held on its open connection fails, saying the question could not be held', async () => {
    const rounds = new MemoryCallRounds();
    rounds.put(EFFECT, { rounds: 0, asked: 0, held: true });
    const { outcome, sent } = await callWith([], [], rounds);
    expect(sent).toEqual([]);
    expect(outcome).toEqual({ refused: HELD_QUESTION_LOST });
  });
});
