/**
 * The wait ledger on its own (src/host/waits/): asks and tool calls through one interface,
 * over memory. First result wins (the same again is a retry, another one refused), expiry,
 * the waits of one task closed by its cancellation, the run's end closing all, and a token
 * per wait, for both kinds alike; then what differs between them. The same ledger over a run
 * object's storage, with the layouts runs stored, is test/worker/wait-ledger.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MemoryWaitStore } from '../../../src/host/waits/memory-wait-store.ts';
import { WAIT_KINDS, type AskAnswer, type CallResult } from '../../../src/host/waits/wait-kinds.ts';
import { WaitLedger, type Wait, type WaitKindPolicy } from '../../../src/host/waits/wait-ledger.ts';
import { isTokenShaped, waitToken, waitTokenKey } from '../../../src/host/waits/wait-token.ts';
import { Waiters } from '../../../src/host/waits/waiters.ts';

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

/** A ledger over memory with the given waits open and pending, and the chains that wait on them. */
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
      const { store, ledger, waiters, changes } = setUp(kind, [{ id: 'w1', task: '0' }]);
      const end = waiters.wait('w1');
      expect(waiters.count).toBe(1);
      expect(changes()).toBe(1);
      expect(ledger.take('w1', kind.first, RUNNING, T0)).toBe('taken');
      expect(waiters.wake('w1')).toBe(true);
      expect(await end).toEqual({ kind: 'done', result: kind.first });
      expect(waiters.count).toBe(0);
      expect(changes()).toBe(2);
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
      expect(ledger.nextDeadline()).toBeNull();
      expect(store.ends.map((ended) => ended.cause)).toEqual(['expired', 'expired']);
    });

    it('expires one pending wait when its own timer says so, whatever the clock, and nothing that has ended', () => {
      const { store, ledger } = setUp(kind, [
        { id: 'timed', task: '0', deadline: at(60) },
        { id: 'other', task: '0', deadline: at(1) },
      ]);
      expect(ledger.expireOne('timed', T0)).toBe(true);
      expect(ledger.expireOne('timed', T0)).toBe(false);
      expect(ledger.expireOne('unknown', T0)).toBe(false);
      expect(store.get('other')!.state).toBe('pending');
      ledger.take('other', kind.first, RUNNING, T0);
      expect(ledger.expireOne('other', T0 + 60_000)).toBe(false);
      expect(store.get('other')!.state).toBe('done');
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
      expect(store.ends.filter((ended) => ended.end.kind === 'closed').map((ended) => ended.cause)).toEqual(['cancelled', 'cancelled']);
      // The sibling still takes its result.
      expect(ledger.take('c', kind.first, RUNNING, T0 + 9_000)).toBe('taken');
      waiters.wake('c');
      expect(await sibling).toEqual({ kind: 'done', result: kind.first });
    });

    it('closes every open wait when the run ends, and leaves those that ended as they ended', async () => {
      const { store, ledger, waiters } = setUp(kind, [
        { id: 'open', task: '0' },
        { id: 'arm', task: '0.f0.2' },
        { id: 'answered', task: '0' },
        { id: 'expired', task: '0', deadline: at(1) },
      ]);
      ledger.take('answered', kind.first, RUNNING, T0);
      ledger.expire(T0 + 1_000);
      const end = waiters.wait('arm');
      expect(ledger.closeAll(T0 + 2_000)).toEqual(['open', 'arm']);
      waiters.wake('arm');
      expect(await end).toEqual({ kind: 'closed' });
      expect(store.list().map((wait) => wait.state)).toEqual(['closed', 'closed', 'done', 'expired']);
      expect(store.ends.slice(-2).map((ended) => ended.cause)).toEqual(['run-ended', 'run-ended']);
      expect(ledger.closeAll(T0 + 3_000)).toEqual([]);
    });

    it('hands nothing over for a wait still open, and counts no chain twice', () => {
      const { waiters } = setUp(kind, [{ id: 'w', task: '0' }]);
      void waiters.wait('w');
      expect(waiters.wake('w')).toBe(false);
      expect(waiters.count).toBe(1);
      expect(waiters.wake('unknown')).toBe(false);
    });

    it('gives every wait its own token, under its kind’s label', async () => {
      const key = await waitTokenKey('deployment secret');
      const run = 'a'.repeat(64);
      const token = await waitToken(key, kind.policy.tokenLabel, run, 'w1');
      expect(isTokenShaped(token)).toBe(true);
      expect(await waitToken(key, kind.policy.tokenLabel, run, 'w1')).toBe(token);
      const others = [
        await waitToken(key, kind.policy.tokenLabel, run, 'w2'),
        await waitToken(key, kind.policy.tokenLabel, 'b'.repeat(64), 'w1'),
        await waitToken(await waitTokenKey('another secret'), kind.policy.tokenLabel, run, 'w1'),
      ];
      expect(new Set([token, ...others]).size).toBe(4);
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
    expect(store.get('0-1')!.state).toBe('pending');
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
    expect(ledger.expireOne('tc', T0 + 60_000)).toBe(false);
    expect(ledger.nextDeadline()).toBeNull();
    ledger.settle('tc', { output: 'at once' }, T0);
    expect(store.ends).toEqual([{ id: 'tc', end: { kind: 'done', result: { output: 'at once' } }, cause: 'settled' }]);
    // A settle after the end changes nothing.
    ledger.settle('tc', { output: 'again' }, T0);
    expect(store.get('tc')!.result).toEqual({ output: 'at once' });
  });

  it('gives an ask and a call under the same id different tokens: each kind its own label', async () => {
    const key = await waitTokenKey('deployment secret');
    expect(WAIT_KINDS.ask.tokenLabel).not.toBe(WAIT_KINDS.call.tokenLabel);
    expect(await waitToken(key, WAIT_KINDS.ask.tokenLabel, 'run', '0-1')).not.toBe(await waitToken(key, WAIT_KINDS.call.tokenLabel, 'run', '0-1'));
  });
});
