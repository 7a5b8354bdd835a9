/**
 * Assembles the Lua runtime layer the Engine loads (as bytecode) into every section VM, from
 * the `.lua` files of this folder (bundled into sources.generated.ts by scripts/bundle-lua.mjs).
 */
import type { RuntimeChunk } from '../vm.ts';
import { LUA_SOURCES } from './sources.generated.ts';

/** The Engine's modules loaded into a VM on first use, by name. */
export const LAZY_MODULES: Record<string, RuntimeChunk> = {
  tools: { name: 'runvil.tools', source: LUA_SOURCES.tools },
  models: { name: 'runvil.models', source: LUA_SOURCES.models },
  prelude: { name: 'runvil.prelude', source: LUA_SOURCES.prelude },
  tasks: { name: 'runvil.tasks', source: LUA_SOURCES.tasks },
};

const module = (source: string, args: string) => `(function(...)\n${source}\nend)(${args})`;

/** The runtime chunk every section VM loads up front. */
export function runtimeChunk(): RuntimeChunk {
  return (assembled ??= assemble());
}

let assembled: RuntimeChunk | undefined;

function assemble(): RuntimeChunk {
  const parts = [
    `local R = ${module(LUA_SOURCES.base, '')}`,
    `R.json = ${module(LUA_SOURCES.json, 'R')}`,
    `local sandbox = ${module(LUA_SOURCES.sandbox, 'R')}`,
    `local state = ${module(LUA_SOURCES.state, 'R')}`,
    `local walk = ${module(LUA_SOURCES.walk, 'R')}`,
    `R.walk, R.state, R.sandbox = walk, state, sandbox`,
    module(LUA_SOURCES.main, 'R, sandbox, state, walk'),
  ];
  // Semicolons: a line that starts with '(' would otherwise call the previous line's value.
  return { name: 'runvil', source: parts.join(';\n') };
}
