/**
 * The run error of an exception that escaped the Engine: a bug, or the Lua runtime itself
 * failing. Its text (a wasm abort, a stack) means nothing to whoever started the run and may
 * say more than they should see, so the run's error says what happened in words, and the
 * caller logs the exception where the operator reads it (the Worker's log, stderr).
 */
import type { RunError } from '../engine/errors.ts';

/** Texts of the exceptions a wasm heap or Lua state out of memory throws. */
const OUT_OF_MEMORY = /not enough memory|out of memory|Aborted\(|Cannot enlarge memory|WebAssembly\.Memory|Array buffer allocation failed/i;

/** What a run that ended on `error` reports: in words, without the exception's text. */
export function internalRunError(error: unknown): RunError {
  if (OUT_OF_MEMORY.test(exceptionText(error))) return { kind: 'Limit', message: 'the Lua runtime ran out of memory, so the run could not go on' };
  return { kind: 'Lua', message: 'the run stopped on an internal error of Runvil; the server log has the details' };
}

/** True when `error` is the abort of a wasm module (emscripten's abort(), after Lua's panic): the module is done for. */
export function isRuntimeAbort(error: unknown): boolean {
  return /Aborted\(/.test(exceptionText(error));
}

/** An exception's text for the log: its stack when it has one. */
export function exceptionText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}
