/**
 * The wait ledger on its own (src/worker/waits/wait-ledger.ts): asks and tool calls through
 * one interface, over memory and over a run object's storage with the record layouts runs
 * already stored. Expiry, first result wins, a token per wait, and the waits of one task
 * closed by its cancellation, for both kinds alike. In workerd: the tokens are compared with
 * WebCrypto's timingSafeEqual, and the stored ledger runs on Durable Object storage.
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
import {
  MemoryWaitStore,
  WAIT_KINDS,
  WaitLedger,
  Waiters,
  type AskAnswer,
  type CallResult,
  type Wait,
  type WaitKindPolicy,
} from '../../src/worker/waits/wait-ledger.ts';
import { testEnv } from './app/client.ts';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const RUNNING = { status: 'running', ended: false };

/** One kind of wait, as the tests drive it: its policy, two different results, and the first again in another form. */
interface KindCase<P> {
  name: string;
  policy: WaitKindPolicy<P>;
  first: P;
  firstAgain: P;
  second: P;
  /** A wait of this kind as its face records it (a call starts `opening`, an ask `pending`). */
  opened(id: string, task: string, deadline: string | null): Wait<P>;
}

const askCase: KindCase<AskAnswer> = {
  name: 'ask',
  policy: WAIT_KINDS.ask,
  first: { text: 'yes', by: 'ana' },
  // Who answered is kept, not compared: the same text is a retry whoever sends it.
  firstAgain: { text: 'yes', by: null },
  second: { text: 'no', by: 'ana' },
  opened: (id, task, deadline) => ({ id, task, state: 'pending', deadline, choices: null }),
};

const callCase: KindCase<CallResult> = {
  name: 'tool call',
  policy: WAIT_KINDS.call,
  first: { output: { a: 1, b: 2 } },
  firstAgain: { output: { b: 2, a: 1 } },
  second: { error: 'it broke' },
  opened: (id, task, deadline) => ({ id, task, state: 'opening', deadline }),
};

/** A ledger over memory with wait `id` open and pending, and the chains that wait on it. */
function setUp<P>(kind: KindCase<P>, waits: { id: string; task: string; deadline?: string | null }[]) {
  const store = new MemoryWaitStore<P>('run-1');
  for (const wait of waits) {
    store.open(kind.opened(wait.id, wait.task, wait.deadline ?? null));
    store.markPending(wait.id);
  }
  const ledger = new WaitLedger(store, kind.policy);
  let changes = 0;
  const waiters = new Waiters(ledger, () => changes++);
  return { store, ledger, waiters, changes: () => changes };
}

for (const kind of [askCase, callCase] as KindCase<unknown>[]) {
  describe(`a ${kind.name} through the wait ledger`, () => {
    it('takes the first result only: the same again is a retry, another one is refused as taken', async () => {
      const { store, ledger, waiters } = setUp(kind, [{ id: 'w1', task: '0' }]);
      const end = waiters.wait('w1');
      expect(waiters.count).toBe(1);
      expect(ledger.take('w1', kind.first, RUNNING, T0)).toBe('taken');
      expect(waiters.wake('w1')).toBe(true);
      expect(await end).toEqual({ kind: 'done', result: kind.first });
      expect(waiters.count).toBe(0);
      expect(ledger.take('w1', kind.firstAgain, RUNNING, T0 + 1)).toBe('retry');
      const refused = ledger.take('w1', kind.second, RUNNING, T0 + 2);
      expect(refused).toMatchObject({ ok: false, reason: 'taken', status: 409 });
      expect(refused).toHaveProperty('message', expect.stringContaining(`${kind.policy.noun} w1`));
      // One end recorded, the first result's, at the first time.
      expect(store.ends).toEqual([{ id: 'w1', end: { kind: 'done', result: kind.first }, cause: 'posted' }]);
      expect(store.get('w1')!.doneAt).toBe(new Date(T0).toISOString());
      // A chain that waits after the end gets it at once.
      expect(await waiters.wait('w1')).toEqual({ kind: 'done', result: kind.first });
    });

    it('refuses a result for a wait the run does not have with 404, naming it', () => {
      const { ledger } = setUp(kind, []);
      expect(ledger.take('nope', kind.first, RUNNING, T0)).toEqual({
        ok: false,
        reason: kind.policy.missing,
        status: 404,
        message: `run run-1 has no ${kind.policy.noun} "nope"`,
      });
    });

    it('expires a pending wait at its deadline, not before; the chain that waits is handed the expiry, and a later result is stale', async () => {
      const { store, ledger, waiters } = setUp(kind, [
        { id: 'soon', task: '0', deadline: at(10) },
        { id: 'later', task: '0', deadline: at(60) },
        { id: 'never', task: '0' },
      ]);
      expect(ledger.nextDeadline()).toBe(T0 + 10_000);
      const end = waiters.wait('soon');
      expect(ledger.expire(T0 + 9_999)).toEqual([]);
      expect(ledger.expire(T0 + 10_000)).toEqual(['soon']);
      expect(ledger.expire(T0 + 10_000)).toEqual([]);
      waiters.wake('soon');
      expect(await end).toEqual({ kind: 'expired' });
      expect(ledger.nextDeadline()).toBe(T0 + 60_000);
      expect(ledger.take('soon', kind.first, RUNNING, T0 + 11_000)).toMatchObject({ ok: false, reason: 'expired', status: 409 });
      // A wait without a deadline waits as long as its run: no expiry, however late.
      expect(ledger.expire(T0 + 1e12)).toEqual(['later']);
      expect(store.get('never')!.state).toBe('pending');
      expect(store.ends.map((ended) => ended.cause)).toEqual(['expired', 'expired']);
    });

    it('refuses a result for a wait that expired before its run ended as expired, the cause that came first', () => {
      const { ledger } = setUp(kind, [
        { id: 'expired', task: '0', deadline: at(10) },
        { id: 'open', task: '0' },
      ]);
      ledger.expire(T0 + 10_000);
      ledger.closeAll(T0 + 20_000);
      const ended = { status: 'cancelled', ended: true };
      expect(ledger.take('expired', kind.first, ended, T0 + 30_000)).toMatchObject({ reason: 'expired' });
      expect(ledger.take('open', kind.first, ended, T0 + 30_000)).toMatchObject({ reason: 'run-ended', message: expect.stringContaining('(cancelled)') });
    });

    it("closes the open waits of a cancelled task and of the tasks it started, not its siblings'; their chains are handed the close", async () => {
      const { store, ledger, waiters } = setUp(kind, [
        { id: 'a', task: '0.1' },
        { id: 'b', task: '0.1.0' },
        { id: 'c', task: '0.10' },
        { id: 'd', task: '0' },
        { id: 'e', task: '0.1', deadline: at(5) },
      ]);
      ledger.expire(T0 + 5_000);
      const ends = [waiters.wait('a'), waiters.wait('b')];
      const sibling = waiters.wait('c');
      expect(waiters.count).toBe(3);
      const closed = ledger.closeWithin('0.1', T0 + 6_000);
      expect(closed).toEqual(['a', 'b']);
      for (const id of closed) waiters.wake(id);
      expect(await Promise.all(ends)).toEqual([{ kind: 'closed' }, { kind: 'closed' }]);
      expect(waiters.count).toBe(1);
      expect(store.get('c')!.state).toBe('pending');
      expect(store.get('d')!.state).toBe('pending');
      // An ended wait stays as it ended: the expired one is not closed again.
      expect(store.get('e')!.state).toBe('expired');
      expect(ledger.take('a', kind.first, RUNNING, T0 + 7_000)).toMatchObject({ reason: 'closed', status: 409 });
      expect(ledger.closeWithin('0.1', T0 + 8_000)).toEqual([]);
      // The sibling still takes its result.
      expect(ledger.take('c', kind.first, RUNNING, T0 + 9_000)).toBe('taken');
      waiters.wake('c');
      expect(await sibling).toEqual({ kind: 'done', result: kind.first });
    });

    it('hands nothing over for a wait still open, and counts no chain twice', () => {
      const { waiters } = setUp(kind, [{ id: 'w', task: '0' }]);
      void waiters.wait('w');
      expect(waiters.wake('w')).toBe(false);
      expect(waiters.count).toBe(1);
      expect(waiters.wake('unknown')).toBe(false);
    });
  });
}

describe('what differs between an ask and a call', () => {
  it('refuses an answer outside an ask’s choices, listing them, and takes one of them', () => {
    const store = new MemoryWaitStore<AskAnswer>();
    store.open({ id: '0-1', task: '0', state: 'pending', deadline: null, choices: ['ship', 'hold'] });
    const ledger = new WaitLedger(store, WAIT_KINDS.ask);
    expect(ledger.take('0-1', { text: 'maybe', by: null }, RUNNING, T0)).toEqual({
      ok: false,
      reason: 'not-a-choice',
      status: 400,
      message: 'the answer must be one of the ask\'s choices: "ship", "hold"',
      choices: ['ship', 'hold'],
    });
    expect(ledger.take('0-1', { text: 'hold', by: null }, RUNNING, T0)).toBe('taken');
  });

  it('does not expire or count as waiting a call still being sent; its result may come before the 202', () => {
    const store = new MemoryWaitStore<CallResult>();
    store.open({ id: 'tc', task: '0', state: 'opening', deadline: at(1) });
    const ledger = new WaitLedger(store, WAIT_KINDS.call);
    const waiters = new Waiters(ledger, () => {});
    void waiters.wait('tc');
    expect(waiters.count).toBe(0);
    expect(ledger.expire(T0 + 60_000)).toEqual([]);
    expect(ledger.nextDeadline()).toBeNull();
    ledger.settle('tc', { output: 'at once' }, T0);
    expect(store.ends).toEqual([{ id: 'tc', end: { kind: 'done', result: { output: 'at once' } }, cause: 'settled' }]);
    // A settle after the end changes nothing.
    ledger.settle('tc', { output: 'again' }, T0);
    expect(store.get('tc')!.result).toEqual({ output: 'at once' });
  });
});

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
