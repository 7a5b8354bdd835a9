/**
 * What a run that ended on an exception reports (src/host/internal-error.ts): the Worker and
 * `runvil run` build the run's error from it, which clients read, so it says what happened in
 * words and carries none of the exception's own text; the log gets that.
 */
import { describe, expect, it } from 'vitest';
import { exceptionText, internalRunError, isRuntimeAbort } from '../../src/host/internal-error.ts';

/** What an aborted wasm module throws (emscripten's abort()), with the panic Lua printed before it. */
function abortOfTheLuaRuntime(): Error {
  const error = new Error('Aborted(native code called abort())');
  error.name = 'RuntimeError';
  return error;
}

describe('the run error of an exception', () => {
  it('says the Lua runtime ran out of memory, as Limit, when the runtime aborted', () => {
    expect(internalRunError(abortOfTheLuaRuntime())).toEqual({ kind: 'Limit', message: 'the Lua runtime ran out of memory, so the run could not go on' });
  });

  it("says so as well for Lua's own memory error and a wasm heap that cannot grow", () => {
    for (const text of [
      'PANIC: unprotected error in call to Lua API (not enough memory)',
      'RangeError: WebAssembly.Memory.grow(): Maximum memory size exceeded',
    ]) {
      expect(internalRunError(new Error(text)).kind).toBe('Limit');
    }
  });

  it("carries none of a bug's text, path or stack", () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'chain') at /srv/runvil/src/engine/scheduler.ts:120");
    const error = internalRunError(bug);
    expect(error).toEqual({ kind: 'Lua', message: 'the run stopped on an internal error of Runvil; the server log has the details' });
    expect(JSON.stringify(error)).not.toMatch(/Cannot read|scheduler|srv/);
  });

  it('tells an abort of the wasm module, after which the Worker makes a new platform, from a bug', () => {
    expect(isRuntimeAbort(abortOfTheLuaRuntime())).toBe(true);
    expect(isRuntimeAbort(new TypeError('x is undefined'))).toBe(false);
  });

  it('leaves the detail to the log: the stack, or the value thrown', () => {
    expect(exceptionText(abortOfTheLuaRuntime())).toContain('Aborted(native code called abort())');
    expect(exceptionText('a string thrown')).toBe('a string thrown');
  });
});
