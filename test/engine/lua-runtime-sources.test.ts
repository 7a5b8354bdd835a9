/**
 * The Lua runtime is written as `.lua` files and reaches the Engine through one generated
 * module (scripts/bundle-lua.mjs), since no file is read at run time.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LUA_SOURCES } from '../../src/engine/lua/runtime/sources.generated.ts';

const root = new URL('../../', import.meta.url);

describe('the generated Lua runtime module', () => {
  it('is what scripts/bundle-lua.mjs generates now (run node scripts/bundle-lua.mjs after editing a .lua file)', async () => {
    // A non-literal specifier: the script is plain JS with no type declarations.
    const script: string = new URL('scripts/bundle-lua.mjs', root).href;
    const { bundleLua, SOURCES_PATH } = (await import(script)) as { bundleLua: () => string; SOURCES_PATH: string };
    expect(readFileSync(new URL(SOURCES_PATH, root), 'utf8')).toBe(bundleLua());
  });

  it('holds every .lua file of the runtime folder, word for word', () => {
    const dir = new URL('src/engine/lua/runtime/', root);
    const files = readdirSync(dir)
      .filter((file) => file.endsWith('.lua'))
      .sort();
    expect(Object.keys(LUA_SOURCES).sort()).toEqual(files.map((file) => file.slice(0, -4)));
    for (const file of files) expect(LUA_SOURCES[file.slice(0, -4) as keyof typeof LUA_SOURCES]).toBe(readFileSync(new URL(file, dir), 'utf8'));
  });
});
