/**
 * Calls into Lua made from outside any running Lua code, under lua_pcall. An allocation Lua
 * cannot make raises `not enough memory`; with no protected call to catch it, Lua calls its
 * panic function and then abort(), which ends the wasm module: every VM of the isolate, and
 * every run after them. So whatever the Engine hands a VM from outside (an answer, a tool's
 * output, a model's reply) is made into Lua values here, where the error is only an error.
 *
 * Calls made while Lua runs (a leaf's results, pushed by the trampoline; the count hook's
 * messages) are protected already: the thread's lua_resume or lua_pcall catches what they
 * raise. What is left outside is a VM's set-up (opening the libraries, defining the leaves,
 * LuaPlatform.newVm), before any cap holds: it asks for a bounded, fixed amount that only a
 * wasm heap that cannot grow at all would refuse.
 */
import type { CApi, LuaState, Pointer } from './c-api.ts';
import { LUA_OK, LUA_TSTRING } from './lua-constants.ts';
import type { EmscriptenModule } from './wasm-exports.ts';
import { pushScalar, readScalar, reserveScratch, type LuaScalar, type ValueHost } from './values.ts';

/** lua_pcall's status for an allocation Lua could not make. */
export const LUA_ERRMEM = 4;
/** lua_pcall's nresults that keeps every result. */
const LUA_MULTRET = -1;

/** What a protected call did: how many values it left on the stack, or the Lua error it raised. */
export type ProtectedOutcome = { ok: true; count: number } | { ok: false; status: number; message: string };

/** One wasm function every protected call runs through, with the work of the call under way. */
export class ProtectedCalls {
  /** The C function lua_pcall calls: runs `work`. */
  private readonly entry: Pointer;
  private work: ((state: LuaState) => number) | undefined;

  constructor(
    module: EmscriptenModule,
    private readonly host: ValueHost,
  ) {
    this.entry = module.addFunction((state: LuaState) => this.work!(state), 'ii');
  }

  /**
   * Runs `work` on `state` as a C function under lua_pcall; answers how many values it left
   * there (above the stack's top before the call), or the error it raised, the stack put back.
   * `work` makes C calls only: a JS exception thrown through lua_pcall would leave Lua's
   * error handler pointing at a frame that is gone.
   */
  run(state: LuaState, work: (state: LuaState) => number): ProtectedOutcome {
    const c = this.host.c;
    const base = c.gettop(state);
    const outer = this.work;
    this.work = work;
    // With no upvalues, a light C function: pushing it allocates nothing.
    c.pushcclosure(state, this.entry, 0);
    const status = c.pcallk(state, 0, LUA_MULTRET, 0, 0, 0);
    this.work = outer;
    if (status === LUA_OK) return { ok: true, count: c.gettop(state) - base };
    // The error is a string (Lua's own memory error is made in advance); reading one allocates nothing.
    const message = c.type(state, -1) === LUA_TSTRING ? String(readScalar(this.host, state, -1)) : 'a Lua error that is not text';
    c.settop(state, base);
    return { ok: false, status, message };
  }

  /**
   * Pushes `values` onto `target`, a thread of the VM whose main state is `main` (or `main`
   * itself), which must have room for them (ensureStack). They are made on `main` under
   * lua_pcall and moved across: a suspended thread cannot run a protected call of its own,
   * and lua_xmove only copies stack slots.
   */
  push(main: LuaState, target: LuaState, values: readonly LuaScalar[]): ProtectedOutcome {
    const host = this.host;
    // Grown here, in JS: growing it inside the call could fail where nothing can report it.
    if (!reserveScratch(host, values)) return { ok: false, status: LUA_ERRMEM, message: 'not enough memory' };
    const made = this.run(main, (state) => {
      host.c.natives.luaL_checkstack(state, values.length, 0);
      for (const value of values) pushScalar(host, state, value);
      return values.length;
    });
    if (made.ok && target !== main) host.c.xmove(main, target, made.count);
    return made;
  }
}
