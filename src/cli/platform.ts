/**
 * The command line's one LuaPlatform: wasmoon's factory and compiled runtime are made once
 * per process and shared by every run (a `runvil test` run uses it for every test file).
 */
import wasmoon from 'wasmoon';
import { LuaPlatform } from '../engine/lua/vm.ts';

const { LuaFactory } = wasmoon;

let shared: Promise<LuaPlatform> | undefined;

/** The process's LuaPlatform, created on first use. */
export function cliPlatform(): Promise<LuaPlatform> {
  shared ??= LuaPlatform.create(() => new LuaFactory());
  return shared;
}
