/**
 * The memory call ledger (runvil run, the fixture Host): a call waits on its result, which
 * is taken once (the same again accepted, another refused), fails at its deadline, and is
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
