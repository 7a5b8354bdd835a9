/**
 * `fs` as the MCP conformance suite sees it on Node 20 (mcp-conformance-hooks.mjs resolves it
 * here): node:fs, plus the `globSync` Node 22 added. The suite calls it only to gather a
 * results folder's `checks.json` files (`globSync('**\/checks.json', { cwd })`), so this one
 * walks `cwd` for files named as the pattern's last segment, answering paths relative to it.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export * from 'node:fs';
export { default } from 'node:fs';

/** The files under `cwd` named as `pattern`'s last segment, relative to `cwd`. */
export function globSync(pattern, { cwd = process.cwd() } = {}) {
  const name = pattern.split('/').pop();
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === name) found.push(relative(cwd, path));
    }
  };
  walk(cwd);
  return found;
}
