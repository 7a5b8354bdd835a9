/**
 * The memory call ledger (runvil run, the fixture Host), a face over the one wait lifecycle
 * (src/host/waits/): a call waits on its result, which is taken once (the same again
 * accepted, another refused), fails at its deadline, is closed when the run ends, and is
 * found again by a second open of the same call id, never made twice.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCallLedger } from '../../src/host/memory-call-ledger.ts';
import { callIdOf, isCallId, toolResultOf } from '../../src/host/tool-calls.ts';
import { canonicalJson } from '../../src/json/canonical-json.ts';
import { parseScriptFile } from '../../src/cli/test-file.ts';

const ledger = (delay?: number) =>
  new MemoryCallLedger({
    callback: async (callId) => ({ url: `http://127.0.0.1/${callId}`, token: 't' }),
    ...(delay !== undefined ? { delay: () => delay } : {}),
  });
const open = (calls: MemoryCallLedger, callId = 'tc_1') => calls.open({ callId, tool: 'deploy/start', chain: '0', timeoutSeconds: 60 });

describe('a call in the memory ledger', () => {
  it('waits once the service answered 202, and ends with the result delivered', async () => {
    const calls = ledger();
    expect(open(calls).state).toBe('sending');
    calls.markWaiting('tc_1');
    expect(calls.waiting().map((record) => record.call_id)).toEqual(['tc_1']);
    const ended = calls.wait('tc_1');
    expect(calls.deliver('tc_1', { output: { v: 1, ok: true } })).toEqual({ ok: true });
    expect(await ended).toEqual({ kind: 'result', result: { output: { v: 1, ok: true } } });
  });

  it('takes the same result again (in any key order) and refuses another with 409, an unknown call with 404', () => {
    const calls = ledger();
    open(calls);
    calls.markWaiting('tc_1');
    calls.deliver('tc_1', { output: { v: 1, ok: true } });
    expect(calls.deliver('tc_1', { output: { ok: true, v: 1 } })).toEqual({ ok: true });
    expect(calls.deliver('tc_1', { output: { ok: true, v: 2 } })).toMatchObject({ ok: false, status: 409 });
    expect(calls.deliver('tc_1', { error: 'x' })).toMatchObject({ ok: false, status: 409 });
    expect(calls.deliver('tc_2', { output: 'x' })).toMatchObject({ ok: false, status: 404 });
  });

  it('takes a result posted before the service answered 202', async () => {
    const calls = ledger();
    open(calls);
    const ended = calls.wait('tc_1');
    expect(calls.deliver('tc_1', { output: 'early' })).toEqual({ ok: true });
    calls.markWaiting('tc_1');
    expect(await ended).toEqual({ kind: 'result', result: { output: 'early' } });
    expect(calls.waiting()).toEqual([]);
  });

  it('expires at its deadline, and then refuses a late result with 409', async () => {
    const calls = ledger(1);
    open(calls);
    calls.markWaiting('tc_1');
    expect(await calls.wait('tc_1')).toEqual({ kind: 'expired' });
    expect(calls.deliver('tc_1', { output: 'late' })).toMatchObject({ ok: false, status: 409, message: expect.stringContaining('deadline passed') });
  });

  it('is found again by a second open of its id (a replay), not made anew', () => {
    const calls = ledger();
    open(calls);
    calls.markWaiting('tc_1');
    expect(open(calls).state).toBe('waiting');
  });

  it("answers the callback route's refusals in runvil run's words, with 404 or 409", async () => {
    const calls = new MemoryCallLedger({
      callback: async (callId) => ({ url: `http://127.0.0.1/${callId}`, token: 't' }),
      clock: () => Date.parse('2026-01-01T00:00:00.000Z'),
      delay: () => 1,
    });
    expect(calls.deliver('tc_9', { output: 'x' })).toEqual({ ok: false, status: 404, message: 'this run has no tool call "tc_9"' });
    open(calls, 'tc_done');
    calls.deliver('tc_done', { output: 'first' });
    expect(calls.deliver('tc_done', { output: 'second' })).toEqual({
      ok: false,
      status: 409,
      message: 'tool call tc_done already has a different result (received at 2026-01-01T00:00:00.000Z); a result is taken once',
    });
    open(calls, 'tc_late');
    calls.markWaiting('tc_late');
    expect(await calls.wait('tc_late')).toEqual({ kind: 'expired' });
    expect(calls.deliver('tc_late', { output: 'late' })).toEqual({
      ok: false,
      status: 409,
      message: 'tool call tc_late is no longer waiting: its deadline passed (2026-01-01T00:01:00.000Z)',
    });
    open(calls, 'tc_open');
    calls.closeAll();
    expect(calls.deliver('tc_open', { output: 'after the end' })).toEqual({
      ok: false,
      status: 409,
      message: 'tool call tc_open is no longer waiting: the run no longer needs its result',
    });
  });

  it("is closed when the run ends, sent or waiting: the chain that waits is handed the close, and the deadline's timer is gone", async () => {
    const calls = ledger(50);
    open(calls, 'tc_sent');
    open(calls, 'tc_waiting');
    calls.markWaiting('tc_waiting');
    open(calls, 'tc_done');
    calls.settle('tc_done', { output: 'at once' });
    const ends = [calls.wait('tc_sent'), calls.wait('tc_waiting')];
    calls.closeAll();
    expect(await Promise.all(ends)).toEqual([{ kind: 'closed' }, { kind: 'closed' }]);
    expect(await calls.wait('tc_done')).toEqual({ kind: 'result', result: { output: 'at once' } });
    expect(calls.waiting()).toEqual([]);
    // Past the deadline's delay, the closed call is still closed, not expired.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(open(calls, 'tc_waiting').state).toBe('closed');
  });

  it('takes the result a service gave at once, and nothing after it', async () => {
    const calls = ledger();
    open(calls);
    calls.settle('tc_1', { error: 'refused at once' });
    calls.settle('tc_1', { output: 'again' });
    expect(await calls.wait('tc_1')).toEqual({ kind: 'result', result: { error: 'refused at once' } });
    expect(calls.deliver('tc_1', { error: 'refused at once' })).toEqual({ ok: true });
    expect(calls.deliver('tc_1', { output: 'again' })).toMatchObject({ ok: false, status: 409 });
  });
});

describe('call ids and results', () => {
  it('derives the call id from the run and the effect: stable, and different per run and per effect', async () => {
    const a = await callIdOf('run-a', { chain: '0', seq: 3 });
    expect(isCallId(a)).toBe(true);
    expect(await callIdOf('run-a', { chain: '0', seq: 3 })).toBe(a);
    expect(await callIdOf('run-b', { chain: '0', seq: 3 })).not.toBe(a);
    expect(await callIdOf('run-a', { chain: '0.1', seq: 3 })).not.toBe(a);
    expect(await callIdOf('run-a', { chain: '0', seq: 4 })).not.toBe(a);
  });

  it('reads a callback body as exactly one of output and error', () => {
    expect(toolResultOf({ output: null })).toEqual({ ok: true, result: { output: null } });
    expect(toolResultOf({ error: 'broke' })).toEqual({ ok: true, result: { error: 'broke' } });
    expect(toolResultOf({})).toMatchObject({ ok: false });
    expect(toolResultOf({ output: 1, error: 'x' })).toMatchObject({ ok: false });
    expect(toolResultOf({ error: ' ' })).toMatchObject({ ok: false, field: 'error' });
    expect(toolResultOf({ error: ['x'] })).toMatchObject({ ok: false, field: 'error' });
    expect(toolResultOf({ output: 1, __proto__x: 2 })).toMatchObject({ ok: false, field: '__proto__x' });
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: 'x' })).toBe('{"a":"x","b":[1,{"c":2,"d":1}]}');
  });
});

describe('a fixture tool that answers later, in a script file', () => {
  it('takes later: true or never, and refuses a timeout without later, naming it', () => {
    const ok = parseScriptFile('host:\n  packs:\n    acme/deploy:\n      tools:\n        - { name: start, later: never, timeout: 5 }\n');
    expect(ok.ok).toBe(true);
    const bad = parseScriptFile('host:\n  packs:\n    acme/deploy:\n      tools:\n        - { name: start, returns: x, timeout: 5 }\n');
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).toContain('is the wait of a tool whose result comes `later`; set `later` too');
    const wrong = parseScriptFile('host:\n  packs:\n    acme/deploy:\n      tools:\n        - { name: start, later: soon }\n');
    expect(wrong.ok).toBe(false);
    expect(JSON.stringify(wrong)).toContain('true, false or never');
  });
});
