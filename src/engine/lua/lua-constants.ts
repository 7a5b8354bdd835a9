/**
 * Lua 5.4's C API constants as wasmoon's build has them (lua.h), written once for every
 * module that calls the C API.
 */

/** lua_resume and lua_pcall status codes. */
export const LUA_OK = 0;
export const LUA_YIELD = 1;

/** lua_type's answers. */
export const LUA_TNIL = 0;
export const LUA_TBOOLEAN = 1;
export const LUA_TNUMBER = 3;
export const LUA_TSTRING = 4;
export const LUA_TTABLE = 5;
export const LUA_TFUNCTION = 6;

/** The registry's pseudo-index; the upvalues of a C closure sit below it. */
export const LUA_REGISTRYINDEX = -1001000;
/** The pseudo-index of a C closure's upvalue number `index` (from 1). */
export const upvalue = (index: number): number => LUA_REGISTRYINDEX - index;

/** lua_sethook's mask for the count hook. */
export const LUA_MASKCOUNT = 1 << 3;
