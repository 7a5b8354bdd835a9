/**
 * Assembles the Lua runtime layer the Engine loads (as bytecode) into every section VM.
 */
import type { RuntimeChunk } from '../vm.ts';
import { BASE_LUA } from './base.lua.ts';
import { JSON_LUA } from './json.lua.ts';
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

/** The runtime chunk, with extensions (tools, models, ...) appended in order. */
export function runtimeChunk(extensions: RuntimeExtension[] = []): RuntimeChunk {
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
  const name = ['runvil', ...extensions.map((extension) => extension.name)].join('+');
  return { name, source: parts.join('\n') };
}
