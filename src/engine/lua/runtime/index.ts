/**
 * Assembles the Lua runtime layer the Engine loads (as bytecode) into every section VM.
 */
import type { RuntimeChunk } from '../vm.ts';
import { BASE_LUA } from './base.lua.ts';
import { JSON_LUA } from './json.lua.ts';
import { MODELS_LUA } from './models.lua.ts';
import { PRELUDE_LUA } from './prelude.lua.ts';
import { TOOLS_LUA } from './tools.lua.ts';
import { MAIN_LUA } from './main.lua.ts';
import { SANDBOX_LUA } from './sandbox.lua.ts';
import { STATE_LUA } from './state.lua.ts';
import { TASKS_LUA } from './tasks.lua.ts';
import { WALK_LUA } from './walk.lua.ts';

/** The Engine's modules loaded into a VM on first use, by name. */
export const LAZY_MODULES: Record<string, RuntimeChunk> = {
  tools: { name: 'runvil.tools', source: TOOLS_LUA },
  models: { name: 'runvil.models', source: MODELS_LUA },
  prelude: { name: 'runvil.prelude', source: PRELUDE_LUA },
  tasks: { name: 'runvil.tasks', source: TASKS_LUA },
};

const module = (source: string, args: string) => `(function(...)\n${source}\nend)(${args})`;

/** The runtime chunk every section VM loads up front. */
export function runtimeChunk(): RuntimeChunk {
  return (assembled ??= assemble());
}

let assembled: RuntimeChunk | undefined;

function assemble(): RuntimeChunk {
  const parts = [
    `local R = ${module(BASE_LUA, '')}`,
    `R.json = ${module(JSON_LUA, 'R')}`,
    `local sandbox = ${module(SANDBOX_LUA, 'R')}`,
    `local state = ${module(STATE_LUA, 'R')}`,
    `local walk = ${module(WALK_LUA, 'R')}`,
    `R.walk, R.state, R.sandbox = walk, state, sandbox`,
    module(MAIN_LUA, 'R, sandbox, state, walk'),
  ];
  // Semicolons: a line that starts with '(' would otherwise call the previous line's value.
  return { name: 'runvil', source: parts.join(';\n') };
}
