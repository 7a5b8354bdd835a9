/**
 * The wait ledger (src/host/waits/wait-ledger.ts) as the Worker keeps it: over a run
 * object's storage, with the record layouts runs already stored, and the tokens the Worker
 * derives per wait, compared with WebCrypto's timingSafeEqual. In workerd, on Durable Object
 * storage. The ledger on its own (asks and calls through one interface, over memory) is
 * test/host/waits/wait-ledger.test.ts.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { RunState } from '../../src/worker/run-object/run-state.ts';
import type { AskRecord } from '../../src/worker/run-object/run-view.ts';
import type { CallRecord } from '../../src/host/tool-calls.ts';
import type { Env } from '../../src/worker/env.ts';
import { askToken, isAskToken } from '../../src/worker/waits/ask-token.ts';
import { callToken, isCallToken } from '../../src/worker/waits/call-token.ts';
import { storedLedgers } from '../../src/worker/waits/stored-waits.ts';
import { testEnv } from './app/client.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const RUNNING = { status: 'running', ended: false };

describe('a token per wait', () => {
  const env = { RUNVIL_API_TOKEN: 'api-secret' } as Env;
  const run = 'a'.repeat(64);

  it('gives every wait its own token, and a token answers its own wait only', async () => {
    const tokens = new Set<string>();
    for (const id of ['0-1', '0-2', '0.1-1']) tokens.add((await askToken(env, run, id))!);
    for (const id of ['tc_' + '1'.repeat(32), 'tc_' + '2'.repeat(32)]) tokens.add((await callToken(env, run, id))!);
    // An ask and a call under the same id still have different tokens (each kind its own label).
    tokens.add((await callToken(env, run, '0-1'))!);
    expect(tokens.size).toBe(6);
    const ask1 = (await askToken(env, run, '0-1'))!;
    expect(await isAskToken(env, run, '0-1', ask1)).toBe(true);
    expect(await isAskToken(env, run, '0-2', ask1)).toBe(false);
    expect(await isAskToken(env, 'b'.repeat(64), '0-1', ask1)).toBe(false);
    expect(await isCallToken(env, run, '0-1', ask1)).toBe(false);
    const call1 = (await callToken(env, run, 'tc_' + '1'.repeat(32)))!;
    expect(await isCallToken(env, run, 'tc_' + '1'.repeat(32), call1)).toBe(true);
    expect(await isCallToken(env, run, 'tc_' + '2'.repeat(32), call1)).toBe(false);
    expect(await isAskToken(env, run, 'tc_' + '1'.repeat(32), call1)).toBe(false);
    for (const bad of ['', call1.toUpperCase(), call1.slice(1), `${call1}0`]) expect(await isCallToken(env, run, 'tc_' + '1'.repeat(32), bad)).toBe(false);
  });
});

/** Runs `body` on the storage of a fresh run object holding a new run. */
async function onStoredRun<T>(body: (state: RunState, kv: { put(key: string, value: unknown): void }) => T): Promise<T> {
  const stub = testEnv.RUNS.get(testEnv.RUNS.newUniqueId());
  return runInDurableObject(
    stub,
    async (_instance: unknown, object: { storage: ConstructorParameters<typeof RunState>[0] & { kv: { put(key: string, value: unknown): void } } }) => {
      const state = new RunState(object.storage);
      state.create({ run_id: 'stored-run', prompt: 'p', seed: '1', created_at: at(0), timeout_seconds: 60, deadline_at: T0 + 60_000 }, '', {});
      return body(state, object.storage.kv);
    },
  );
}

describe('the ledger over a run object’s storage', () => {
  it('reads asks and calls stored by earlier versions as they were: answered, pending, expired and closed', async () => {
    const states = await onStoredRun((state, kv) => {
      // An ask stored before asks kept an order, choices or deadlines, with the random token they had then.
      const oldAsk: AskRecord = { ask_id: '0-1', question: 'Go?', asked_at: at(0), token: 'f'.repeat(64), state: 'pending' };
      kv.put('ask:0-1', oldAsk);
      kv.put('ask:0-2', { ask_id: '0-2', question: null, asked_at: at(0), state: 'answered', answer: 'ok', answered_at: at(1) } satisfies AskRecord);
      // A closed ask without a reason was closed by its task's cancellation (or the run's end).
      kv.put('ask:0.1-1', { ask_id: '0.1-1', question: null, asked_at: at(0), state: 'closed' } satisfies AskRecord);
      kv.put('ask:0-4', { ask_id: '0-4', question: null, asked_at: at(0), state: 'closed', closed_reason: 'expired', expires_at: at(3) } satisfies AskRecord);
      const call = (id: string, callState: CallRecord['state'], order: number): CallRecord => ({
        call_id: id,
        tool: 'deploy/start',
        chain: '0',
        state: callState,
        called_at: at(0),
        deadline: at(30),
        timeout_seconds: 30,
        order,
      });
      kv.put('call:tc_sending', call('tc_sending', 'sending', 1));
      kv.put('call:tc_waiting', call('tc_waiting', 'waiting', 2));
      kv.put('call:tc_done', { ...call('tc_done', 'done', 3), result: { output: 'built' }, received_at: at(2) });
      kv.put('call:tc_expired', call('tc_expired', 'expired', 4));
      const { asks, calls } = storedLedgers(state);
      return {
        asks: asks.store.list().map((wait) => [wait.id, wait.task, wait.state]),
        calls: calls.store.list().map((wait) => [wait.id, wait.state]),
        answer: asks.store.get('0-2')!.result,
        retry: asks.take('0-2', { text: 'ok', by: 'someone' }, RUNNING, T0),
        result: calls.take('tc_done', { output: 'built' }, RUNNING, T0),
        nextDeadline: calls.nextDeadline(),
      };
    });
    expect(new Map(states.asks.map(([id, task, wait]) => [id, [task, wait]]))).toEqual(
      new Map([
        ['0-1', ['0', 'pending']],
        ['0-2', ['0', 'done']],
        ['0.1-1', ['0.1', 'closed']],
        ['0-4', ['0', 'expired']],
      ]),
    );
    expect(states.calls).toEqual([
      ['tc_sending', 'opening'],
      ['tc_waiting', 'pending'],
      ['tc_done', 'done'],
      ['tc_expired', 'expired'],
    ]);
    expect(states.answer).toEqual({ text: 'ok', by: null });
    expect(states.retry).toBe('retry');
    expect(states.result).toBe('retry');
    expect(states.nextDeadline).toBe(T0 + 30_000);
  });

  it('writes each end in the layout it has always had, with its event', async () => {
    const written = await onStoredRun((state) => {
      state.putAsk({ ask_id: '0-1', question: 'Go?', asked_at: at(0), state: 'pending', order: 1, choices: null, expires_at: at(10) });
      state.putAsk({ ask_id: '0.2-1', question: null, asked_at: at(0), state: 'pending', order: 2, choices: null, expires_at: null });
      state.putAsk({ ask_id: '0-3', question: null, asked_at: at(0), state: 'pending', order: 3, choices: null, expires_at: null });
      const call: CallRecord = {
        call_id: 'tc_a',
        tool: 'deploy/start',
        chain: '0',
        state: 'waiting',
        called_at: at(0),
        deadline: at(10),
        timeout_seconds: 10,
        order: 1,
      };
      state.putCall(call);
      state.putCall({ ...call, call_id: 'tc_b', chain: '0.2', order: 2, deadline: at(100) });
      state.putCall({ ...call, call_id: 'tc_c', order: 3, deadline: at(100) });
      const { asks, calls } = storedLedgers(state);
      asks.expire(T0 + 10_000);
      calls.expire(T0 + 10_000);
      asks.closeWithin('0.2', T0 + 11_000);
      calls.closeWithin('0.2', T0 + 11_000);
      asks.take('0-3', { text: 'done', by: 'ana' }, RUNNING, T0 + 12_000);
      calls.take('tc_c', { error: 'nope' }, RUNNING, T0 + 12_000);
      const events = state.events().map(({ seq: _seq, at: _at, ...event }) => event);
      return { asks: state.asks(), calls: state.calls(), events };
    });
    expect(written.asks).toEqual([
      expect.objectContaining({ ask_id: '0-1', state: 'closed', closed_reason: 'expired', closed_at: at(10) }),
      expect.objectContaining({ ask_id: '0.2-1', state: 'closed', closed_reason: 'cancelled', closed_at: at(11) }),
      expect.objectContaining({ ask_id: '0-3', state: 'answered', answer: 'done', answered_by: 'ana', answered_at: at(12) }),
    ]);
    expect(written.calls.map((call) => call.state)).toEqual(['expired', 'closed', 'done']);
    expect(written.calls[2]).toMatchObject({ result: { error: 'nope' }, received_at: at(12) });
    expect(written.events).toEqual([
      { type: 'ask_expired', task: '0', ask_id: '0-1' },
      { type: 'tool_call_expired', task: '0', call_id: 'tc_a', tool: 'deploy/start' },
      { type: 'ask_answered', task: '0', ask_id: '0-3', answered_by: 'ana' },
      { type: 'tool_result_received', task: '0', call_id: 'tc_c', tool: 'deploy/start', failed: true },
    ]);
  });
});
