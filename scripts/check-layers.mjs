#!/usr/bin/env node
/**
 * Fails (exit 1) on an import the picture of the parts forbids (CONTRIBUTING.md, "The parts
 * and who may import whom"): each part below lists what it may import, and any import of
 * another part, types included, that is not listed fails with the file and the import.
 * The Worker is checked room by room (src/worker/<room>/), so that its layout keeps showing
 * the architecture. A target ending in `.ts` allows that one file of a room, not the room:
 * a room's face for the rooms that may not import the rest of it.
 * Run by `npm run check:cycles`, in `npm test`; scripts/check-cycles.mjs checks cycles.
 */
import { parseDependencyTree } from 'dpdm';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The parts outside the Worker that the Worker's rooms (but http, console and workerd-lua) may use. */
const BELOW_WORKER = ['json', 'prompt', 'engine', 'models', 'config', 'host', 'remote', 'packs'];
/** The Worker's environment types, which every room but workerd-lua may name. */
const ENV = 'worker/env';

/** What each part may import (besides itself). */
const ALLOWED = new Map(
  Object.entries({
    json: [],
    prompt: ['json'],
    engine: ['json', 'prompt'],
    config: ['json', 'prompt'],
    models: ['json', 'prompt'],
    host: ['json', 'prompt', 'engine', 'models'],
    // The Host never imports the Remote tools: it knows a Pack by its interface alone.
    remote: ['json', 'prompt', 'engine', 'models', 'config', 'host'],
    packs: ['json', 'prompt', 'engine', 'models', 'host'],
    // Prompt tests run on recorded outputs: the fixture never reaches a Remote tool.
    fixture: ['json', 'prompt', 'engine', 'models', 'config', 'host', 'packs'],
    cli: ['json', 'prompt', 'engine', 'models', 'config', 'host', 'remote', 'packs', 'fixture'],
    // The Worker: its entry (index.ts, app.ts) assembles the rooms.
    'worker/entry': [
      ...BELOW_WORKER,
      ENV,
      'worker/http',
      'worker/keys',
      'worker/oauth',
      'worker/mcp',
      'worker/routes',
      'worker/console',
      'worker/deployment',
      'worker/run-object',
      'worker/waits',
      'worker/outbox',
      'worker/triggers',
      'worker/workerd-lua',
    ],
    // env.ts names the run object's RPC interface as the type of its namespace binding.
    [ENV]: ['models', 'worker/run-object/run-object-api.ts'],
    // auth.ts authenticates keys: their lookup, rate limit, scopes and the principal they make (keys/).
    'worker/http': [
      'json',
      ENV,
      'worker/keys/key-lookup.ts',
      'worker/keys/key-secret.ts',
      'worker/keys/key-rate-limit.ts',
      'worker/keys/scopes.ts',
      'worker/keys/principal.ts',
    ],
    // Keys and scopes: the store in D1, the routes that manage keys; auth is http's.
    'worker/keys': ['json', ENV, 'worker/http'],
    'worker/console': [ENV],
    // OAuth for /mcp: the provider vouches for a token's grant to auth (http), a grant lives as long as its key (keys' store), the consent page is the console's view, and the public origin is the deployment's.
    'worker/oauth': [
      'json',
      ENV,
      'worker/http',
      'worker/keys/scopes.ts',
      'worker/keys/principal.ts',
      'worker/keys/key-store.ts',
      'worker/keys/key-lookup.ts',
      'worker/console/consent-page.tsx',
      'worker/deployment/public-origin.ts',
    ],
    // The wasmoon adapter loads first, so it imports nothing of the Worker (workerd-lua/README.md).
    'worker/workerd-lua': ['engine'],
    // prompt-library.ts reads uploaded prompts under the KV layout run-store-kv.ts keeps.
    'worker/deployment': [...BELOW_WORKER, ENV, 'worker/http', 'worker/workerd-lua', 'worker/outbox/run-store-kv.ts'],
    // A wait is stored in the run's state, shown in its view and refused in the object's RPC terms; it never reaches the object itself.
    'worker/waits': [
      ...BELOW_WORKER,
      ENV,
      'worker/http',
      'worker/deployment',
      'worker/run-object/run-state.ts',
      'worker/run-object/run-view.ts',
      'worker/run-object/run-object-api.ts',
    ],
    // The outbox records the run's changes from its state; the run object wires it, not the other way round.
    'worker/outbox': [...BELOW_WORKER, ENV, 'worker/deployment', 'worker/run-object/run-state.ts', 'worker/run-object/run-view.ts'],
    // The run object: never a route, a trigger or the console.
    'worker/run-object': [...BELOW_WORKER, ENV, 'worker/http', 'worker/deployment', 'worker/waits', 'worker/outbox', 'worker/workerd-lua'],
    'worker/triggers': [...BELOW_WORKER, ENV, 'worker/http', 'worker/run-object'],
    // /mcp serves prompts as tools: it starts and continues runs as the routes do, through the run object's face.
    'worker/mcp': [...BELOW_WORKER, ENV, 'worker/http', 'worker/keys/scopes.ts', 'worker/deployment', 'worker/run-object', 'worker/waits', 'worker/outbox'],
    // Routes may use any room (but the console's, which app.ts mounts).
    'worker/routes': [
      ...BELOW_WORKER,
      ENV,
      'worker/http',
      'worker/keys',
      'worker/deployment',
      'worker/run-object',
      'worker/waits',
      'worker/outbox',
      'worker/triggers',
      'worker/workerd-lua',
    ],
  }),
);

const WORKER_ENTRY = new Set(['index.ts', 'app.ts']);
const WORKER_ENV = new Set(['env.ts', 'platform-types.ts', 'cloudflare-workers.d.ts']);

/** The part a project file belongs to, or null for a file outside the parts (node_modules). */
function partOf(path) {
  if (path.startsWith('packs/')) return 'packs';
  if (path.startsWith('src/host/remote/')) return 'remote';
  const room = /^src\/worker\/([^/]+)\/./.exec(path);
  if (room) return `worker/${room[1]}`;
  const top = /^src\/worker\/([^/]+)$/.exec(path);
  if (top) return WORKER_ENTRY.has(top[1]) ? 'worker/entry' : WORKER_ENV.has(top[1]) ? ENV : `worker/${top[1]}`;
  const layer = /^src\/([^/]+)\//.exec(path);
  return layer ? layer[1] : null;
}

const tree = await parseDependencyTree(['src/**/*.ts', 'src/**/*.tsx', 'packs/**/*.ts'], {
  context: root,
  cwd: root,
  tsconfig: join(root, 'tsconfig.json'),
  transform: false,
  skipDynamicImports: false,
  onProgress: () => {},
});

const problems = [];
const project = (file) => relative(root, join(root, file)).split('\\').join('/');
for (const [file, dependencies] of Object.entries(tree)) {
  const from = partOf(project(file));
  if (from === null || dependencies === null) continue;
  const allowed = ALLOWED.get(from);
  if (allowed === undefined) {
    problems.push(`${project(file)}: part ${from} is in no row of the table (a file in src/worker/ outside a room?)`);
    continue;
  }
  for (const dependency of dependencies) {
    if (dependency.id === null) continue;
    const target = project(dependency.id);
    const to = partOf(target);
    if (to === null || to === from) continue;
    const fileGrain = to.startsWith('worker/') && to !== ENV ? `${to}/${target.slice(`src/${to}/`.length)}` : null;
    if (allowed.includes(to) || (fileGrain !== null && allowed.includes(fileGrain))) continue;
    problems.push(`${project(file)} imports ${dependency.request}: ${from} may not import ${to}`);
  }
}

if (problems.length > 0) {
  console.error(
    `check-layers: ${problems.length} import(s) the picture of the parts forbids (CONTRIBUTING.md; table in scripts/check-layers.mjs)\n${problems.sort().join('\n')}`,
  );
  process.exit(1);
}
console.log("check-layers: every import between parts and between the Worker's rooms is one the picture allows");
