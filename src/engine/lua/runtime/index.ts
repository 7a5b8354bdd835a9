/**
 * Assembles the Lua runtime layer the Engine loads (as bytecode) into every section VM, from
 * the `.lua` files of this folder (bundled into sources.generated.ts by scripts/bundle-lua.mjs).
 */
import type { RuntimeChunk } from '../vm.ts';
import { LUA_SOURCES } from './sources.generated.ts';

/** A file's source run as a function of the named arguments; its value is what the file returns. */
const module = (source: string, args: string) => `(function(...)\n${source}\nend)(${args})`;

/** The Engine's modules, each a file that returns the function(R, env) installing it (main.lua installs them). */
const INSTALLED = ['tools', 'messages', 'models', 'prelude'] as const;

/** The module main.lua loads on first use (tasks: see there why), by name. */
export const LAZY_MODULES: Record<string, RuntimeChunk> = {
  tasks: { name: 'runvil.tasks', source: LUA_SOURCES.tasks },
};

/** The runtime chunk every section VM loads up front. */
export function runtimeChunk(): RuntimeChunk {
  return (assembled ??= assemble());
}

let assembled: RuntimeChunk | undefined;

function assemble(): RuntimeChunk {
  const parts = [
    `local R = ${module(LUA_SOURCES.base, module(LUA_SOURCES.protocol, ''))}`,
    `R.json = ${module(LUA_SOURCES.json, 'R')}`,
    `local sandbox = ${module(LUA_SOURCES.sandbox, 'R')}`,
    `local state = ${module(LUA_SOURCES.state, 'R')}`,
    `local walk = ${module(LUA_SOURCES.walk, 'R')}`,
    `R.walk, R.state, R.sandbox = walk, state, sandbox`,
    `local modules = { ${INSTALLED.map((name) => `${name} = ${module(LUA_SOURCES[name], '')}`).join(', ')} }`,
    module(LUA_SOURCES.main, 'R, sandbox, state, walk, modules'),
  ];
  // Semicolons: a line that starts with '(' would otherwise call the previous line's value.
  return { name: 'runvil', source: parts.join(';\n') };
}
