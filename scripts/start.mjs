#!/usr/bin/env node
/**
 * `npm start`: serves Runvil on workerd through `wrangler dev`, at
 * http://127.0.0.1:${PORT:-8787}, with KV and Durable Object state persisted under
 * .wrangler/state (RUNVIL_STATE_DIR overrides), serving the prompts of prompts/. The
 * index's D1 tables (migrations/) are applied to the local database before it serves.
 *
 * Secrets come from .dev.vars and from the environment, the environment winning:
 * RUNVIL_API_TOKEN, RUNVIL_WEBHOOK_SECRET_*, RUNVIL_RUN_TIMEOUT_SECONDS,
 * RUNVIL_DEFAULT_MODEL, the model keys (OPENAI_*, ANTHROPIC_*) and the search keys
 * (BRAVE_SEARCH_API_KEY, TAVILY_API_KEY), and every variable runvil.yaml names as `${NAME}`
 * (./runvil.yaml, or the file RUNVIL_CONFIG names); and RUNVIL_ORIGIN, the address served
 * on unless the environment gives another. They are handed to wrangler in a file
 * (start.env in the state directory, readable by its owner only), not on its command line:
 * one per server, since wrangler reads it again on each reload, and a server started beside
 * (another state directory) must not hand this one its token and origin.
 * `--local`: nothing reaches Cloudflare (the Workers AI binding is left out locally).
 *
 * It serves with wrangler.toml less its `[build]` and `[ai]` tables (local-wrangler-config.mjs)
 * and runs the build command itself: once before wrangler starts, again on each change under
 * prompts/ (wrangler's own watcher built twice at every start). The build writes the bundled
 * prompts and configuration of this server alone, under bundle/ in its state directory,
 * never the checkout's src/. Once the server answers, it says where it serves and where the
 * console is.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync, watch } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeLocalConfig, writeLocalWranglerConfig } from './local-wrangler-config.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const port = process.env.PORT || '8787';
const stateDir = process.env.RUNVIL_STATE_DIR || join(root, '.wrangler/state');
const PASSED = /^(RUNVIL_|OPENAI_|ANTHROPIC_)|^(BRAVE_SEARCH_API_KEY|TAVILY_API_KEY)$/;

/** KEY=VALUE lines of a .dev.vars file (dotenv syntax: comments, optional quotes). */
function readDevVars(path) {
  const vars = {};
  if (!existsSync(path)) return vars;
  for (const line of readFileSync(path, 'utf8').split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    let value = match[2];
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    vars[match[1]] = value;
  }
  return vars;
}

/** The names runvil.yaml reads from the environment (`${NAME}`), so that its secrets can come from the process environment too. */
function configNames() {
  const file = process.env.RUNVIL_CONFIG || join(root, 'runvil.yaml');
  if (!existsSync(file)) return new Set();
  return new Set([...readFileSync(file, 'utf8').matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1]));
}

const vars = readDevVars(join(root, '.dev.vars'));
const named = configNames();
for (const [key, value] of Object.entries(process.env)) {
  if ((PASSED.test(key) || named.has(key)) && key !== 'RUNVIL_STATE_DIR' && value !== undefined) vars[key] = value;
}
// Callback and answer URLs are made on the address served here, unless runvil.yaml's
// public_url (or RUNVIL_ORIGIN, set in the environment or .dev.vars behind a proxy) says
// otherwise: the Worker does not take its address from a request's Host header.
vars.RUNVIL_ORIGIN ||= `http://127.0.0.1:${port}`;
if (!vars.RUNVIL_API_TOKEN) {
  console.warn('runvil: RUNVIL_API_TOKEN is not set (in the environment or .dev.vars): every API request will be refused with 401.');
}

const envFile = join(stateDir, 'start.env');
mkdirSync(dirname(envFile), { recursive: true });
writeFileSync(
  envFile,
  Object.entries(vars)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join('\n') + '\n',
  { mode: 0o600 },
);
chmodSync(envFile, 0o600);

const wrangler = join(root, 'node_modules/.bin/wrangler');
const wranglerEnv = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' };

// The build, once here rather than by wrangler (which ran it twice: at start and when its watcher was ready).
// A bundled prompt or runvil.yaml that does not parse or compile stops the start: one message, exit status 1.
// The build writes the server's own generated modules, under its state directory, not the
// checkout's (local-wrangler-config.mjs): a server beside this one builds other prompts.
const bundleDir = join(stateDir, 'bundle');
mkdirSync(bundleDir, { recursive: true });
const buildEnv = { ...process.env, RUNVIL_BUNDLE_DIR: bundleDir };
const local = writeLocalWranglerConfig(root, bundleDir);
const build = () => spawnSync(local.buildCommand, { cwd: root, shell: true, stdio: 'inherit', env: buildEnv }).status === 0;
if (local.buildCommand && !build()) {
  removeLocalConfig(root, bundleDir);
  process.exit(1);
}

// Then the index's tables (migrations/), in the local D1 database under the state directory;
// migrations already applied are skipped. (After the build: a broken prompt stops the start
// at once.)
const migrated = spawnSync(wrangler, ['d1', 'migrations', 'apply', 'RUNVIL_DB', '--local', '--persist-to', stateDir], {
  cwd: root,
  env: { ...wranglerEnv, CI: '1' },
  encoding: 'utf8',
});
if (migrated.status !== 0) {
  console.error(`runvil: applying the index migrations (migrations/) failed:\n${migrated.stdout}${migrated.stderr}`);
  removeLocalConfig(root, bundleDir);
  process.exit(1);
}

// Extra arguments go to wrangler dev (the benchmark passes its own Worker entry).
const args = [
  'dev',
  '--config',
  local.path,
  ...process.argv.slice(2),
  '--local',
  '--ip',
  '127.0.0.1',
  '--port',
  port,
  '--persist-to',
  stateDir,
  '--env-file',
  envFile,
  '--show-interactive-dev-session=false',
];
// Offline: no usage metrics, and no download of Cloudflare's `Request.cf` sample (a placeholder serves).
const child = spawn(wrangler, args, { cwd: root, stdio: 'inherit', env: wranglerEnv });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  removeLocalConfig(root, bundleDir);
  process.exit(code ?? (signal ? 1 : 0));
});

// A change under prompts/ rebuilds the bundle; wrangler reloads the Worker when the bundled files change.
if (local.buildCommand && existsSync(join(root, 'prompts'))) {
  let timer;
  let building = null;
  const rebuild = async () => {
    await building;
    // A change that breaks a bundled prompt or runvil.yaml is not built: its problem is printed once, and the
    // server keeps serving the last good build (scripts/build-failure.mjs).
    const env = { ...buildEnv, RUNVIL_KEEP_LAST_GOOD_BUILD: '1' };
    building = new Promise((resolve) => spawn(local.buildCommand, { cwd: root, shell: true, stdio: 'inherit', env }).on('close', resolve));
  };
  // Not recursive: the build reads only prompts/*.md, and Node 20's recursive watch on Linux
  // loses a file an editor saves by renaming a new one over it (as sed -i and many editors do).
  watch(join(root, 'prompts'), () => {
    clearTimeout(timer);
    timer = setTimeout(rebuild, 200);
  });
}

announceWhenServing(`http://127.0.0.1:${port}`);

/** Says where the server serves and where its console is, once it answers /health. */
async function announceWhenServing(base) {
  while (child.exitCode === null) {
    const ok = await fetch(`${base}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) {
      console.log(`runvil: serving on ${base} (the HTTP API, docs/api.md); the console is at ${base}/console`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
