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
import { WALK_LUA } from './walk.lua.ts';

/** A runtime module that extends the environment: `function(R, env)` in Lua. */
export interface RuntimeExtension {
  name: string;
  source: string;
}

const module = (source: string, args: string) => `(function(...)\n${source}\nend)(${args})`;

/** The Engine's own modules that extend every section's environment, in install order. */
const ENGINE_MODULES: RuntimeExtension[] = [
  { name: 'tools', source: TOOLS_LUA },
  { name: 'models', source: MODELS_LUA },
  { name: 'prelude', source: PRELUDE_LUA },
];

/** The runtime chunk, with further extensions appended after the Engine's own modules. */
export function runtimeChunk(extensions: RuntimeExtension[] = []): RuntimeChunk {
  const name = ['runvil', ...extensions.map((extension) => extension.name)].join('+');
  extensions = [...ENGINE_MODULES, ...extensions];
  const parts = [
    `local R = ${module(BASE_LUA, '')}`,
    `R.json = ${module(JSON_LUA, 'R')}`,
    `local sandbox = ${module(SANDBOX_LUA, 'R')}`,
    `local state = ${module(STATE_LUA, 'R')}`,
    `local walk = ${module(WALK_LUA, 'R')}`,
    `R.walk, R.state, R.sandbox = walk, state, sandbox`,
    `local extensions = {}`,
    ...extensions.map((extension) => `extensions[#extensions + 1] = ${module(extension.source, '')}`),
    module(MAIN_LUA, 'R, sandbox, state, walk, extensions'),
  ];
  // Semicolons: a line that starts with '(' would otherwise call the previous line's value.
  return { name, source: parts.join(';\n') };
}
