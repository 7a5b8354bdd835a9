/**
 * string.rep and table.move as the sandbox gets them: library functions whose C loop no memory
 * bound ends (`string.rep('', 1e15)` loops 10^15 times making nothing; `table.move` over
 * absent elements likewise), so each checks and charges before it calls the C one.
 */
import { upvalue } from './lua-constants.ts';
import { lengthOut, type NativeHost, type NativeVm } from './native-stack.ts';

// string.rep and table.move: the C function is upvalue 3. Arguments are read as C reads
// them, in its order, so a bad one fails with C's own message before anything is charged.

/** string.rep, checked first: a rep of nothing makes nothing, without C looping n times. */
export function rep(host: NativeHost, state: number): number {
  const c = host.c;
  c.luaL_checklstring(state, 1, host.lengthWord);
  const length = lengthOut(host);
  const n = c.luaL_checkinteger(state, 2) as bigint;
  c.luaL_optlstring(state, 3, host.name(''), host.lengthWord);
  // Copies of nothing: C would loop n times to make the empty string.
  if (n > 0n && length + lengthOut(host) === 0) {
    c.lua_pushlstring(state, host.name(''), 0);
    return 1;
  }
  return host.callC(c.lua_tocfunction(state, upvalue(3)) as number, state);
}

/** table.move, its range charged to the run first: C would loop over absent elements unmetered. */
export function move(host: NativeHost, vm: NativeVm, state: number): number {
  const c = host.c;
  const f = c.luaL_checkinteger(state, 2) as bigint;
  const e = c.luaL_checkinteger(state, 3) as bigint;
  c.luaL_checkinteger(state, 4);
  // One instruction an element, charged before C moves them (it checks the ranges itself).
  if (e >= f) {
    let count = e - f + 1n;
    while (count > 0n) {
      const part = count > 1_000_000_000n ? 1_000_000_000 : Number(count);
      if (vm.charge(part)) host.raiseStop(state);
      count -= BigInt(part);
    }
  }
  return host.callC(c.lua_tocfunction(state, upvalue(3)) as number, state);
}
