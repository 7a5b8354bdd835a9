#!/usr/bin/env node
/**
 * Fails (exit 1) on an import cycle, at two grains, from dpdm's dependency tree:
 * - between modules: a runtime import cycle (type-only imports left out: TypeScript erases
 *   them, so they cannot change the order modules evaluate in);
 * - between layers (the folders CONTRIBUTING.md draws: src/json, src/prompt, src/engine,
 *   src/host, src/host/remote, src/models, src/config, src/worker, src/cli, packs): any
 *   import, types included, since a layer that names another's types depends on it as much
 *   as one that calls it. src/host/remote (the Remote tools) is a layer of its own although
 *   it sits inside src/host: it imports the Host's Pack interface, and the Host must never
 *   import it back, so that the Host stays free of the network. A cycle between layers means neither can be read, tested or moved alone.
 * Run by `npm test` (npm run check:cycles); prints each cycle with one import that makes each of its edges.
 * Which part may import which is scripts/check-layers.mjs's, run by the same npm script.
 */
import { parseCircular, parseDependencyTree } from 'dpdm';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entries = ['src/**/*.ts', 'src/**/*.tsx', 'packs/**/*.ts'];
const options = { context: root, cwd: root, tsconfig: join(root, 'tsconfig.json'), skipDynamicImports: false, onProgress: () => {} };

/** The layer a project file belongs to, or null for one outside the layers (node_modules). */
function layerOf(file) {
  const path = relative(root, join(root, file)).split('\\').join('/');
  if (path.startsWith('packs/')) return 'packs';
  if (path.startsWith('src/host/remote/')) return 'src/host/remote';
  const match = /^src\/([^/]+)\//.exec(path);
  return match ? `src/${match[1]}` : null;
}

const problems = [];

const runtimeTree = await parseDependencyTree(entries, { ...options, transform: true });
for (const cycle of parseCircular(runtimeTree)) problems.push(`module cycle: ${[...cycle, cycle[0]].join(' -> ')}`);

// The layer graph, each edge with the first import found that makes it.
const fullTree = await parseDependencyTree(entries, { ...options, transform: false });
const edges = new Map();
for (const [file, dependencies] of Object.entries(fullTree)) {
  const from = layerOf(file);
  if (from === null || dependencies === null) continue;
  for (const dependency of dependencies) {
    const to = dependency.id === null ? null : layerOf(dependency.id);
    if (to === null || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${file} imports ${dependency.request}`);
  }
}

// Tarjan's strongly connected components: every component of more than one layer is a cycle.
let index = 0;
const indexOf = new Map();
const lowOf = new Map();
const stack = [];
const onStack = new Set();
function visit(layer) {
  indexOf.set(layer, index);
  lowOf.set(layer, index++);
  stack.push(layer);
  onStack.add(layer);
  for (const next of edges.get(layer)?.keys() ?? []) {
    if (!indexOf.has(next)) {
      visit(next);
      lowOf.set(layer, Math.min(lowOf.get(layer), lowOf.get(next)));
    } else if (onStack.has(next)) lowOf.set(layer, Math.min(lowOf.get(layer), indexOf.get(next)));
  }
  if (lowOf.get(layer) !== indexOf.get(layer)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== layer);
  if (component.length < 2) return;
  const inside = new Set(component);
  const why = [];
  for (const from of component) for (const [to, example] of edges.get(from) ?? []) if (inside.has(to)) why.push(`  ${from} -> ${to}: ${example}`);
  problems.push(`layer cycle between ${component.sort().join(', ')}:\n${why.sort().join('\n')}`);
}
for (const layer of [...edges.keys()].sort()) if (!indexOf.has(layer)) visit(layer);

if (problems.length > 0) {
  console.error(`check-cycles: ${problems.length} import cycle(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('check-cycles: no import cycle between modules (runtime imports) or between layers (all imports)');
