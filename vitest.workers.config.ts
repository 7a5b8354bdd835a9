/**
 * The workerd test run (`npm run test:workers`): test/worker/ inside workerd, through
 * @cloudflare/vitest-pool-workers with the Worker's own wrangler.toml (its bindings: the
 * run Durable Object, KV). The Worker the tests talk to is test/worker/app/test-worker.ts:
 * the real app and run object, with a test Host and a fault-injection seam.
 *
 * The pool loads modules through Vite with nodejs_compat forced on, which is not how the
 * Worker is deployed; so the script first builds test/worker/bundle/entry.ts with wrangler
 * (wrangler.toml's rules and alias, its compatibility settings) into BUNDLE_DIR, and the
 * pool runs that bundle as a second Worker, bound to the tests as LUA_BUNDLE.
 */
import { existsSync } from 'node:fs';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { unstable_readConfig } from 'wrangler';

const WRANGLER_CONFIG = './wrangler.toml';
const BUNDLE_DIR = '.wrangler/test-bundle';

const bundleEntry = `${BUNDLE_DIR}/entry.js`;
if (!existsSync(bundleEntry)) {
  throw new Error(`${bundleEntry} is missing: run \`npm run test:workers\`, which builds it first`);
}
const deployed = unstable_readConfig({ config: WRANGLER_CONFIG });
// The index's tables, applied to the test D1 database before each test file (test/worker/apply-migrations.ts).
const migrations = await readD1Migrations('./migrations');

export default defineConfig({
  plugins: [
    cloudflareTest({
      // The app and run object with the test Host and the fault-injection seam.
      main: './test/worker/app/test-worker.ts',
      // Nothing here reaches Cloudflare: the AI binding stays unconnected (no test uses it).
      remoteBindings: false,
      wrangler: { configPath: WRANGLER_CONFIG },
      miniflare: {
        bindings: {
          RUNVIL_API_TOKEN: 'test-api-token',
          RUNVIL_WEBHOOK_SECRET_GREET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          RUNVIL_RUN_TIMEOUT_SECONDS: '3600',
          // The origin callback and answer URLs are made on, as `npm start` sets it (src/worker/deployment/public-origin.ts).
          RUNVIL_ORIGIN: 'https://runvil.test',
          // The notification retry schedule, scaled down: 1 ms, 6 ms, 60 ms, 360 ms, 2.16 s.
          RUNVIL_NOTIFY_RETRY_SCALE: '0.0001',
          // acme/deploy's secret (test/worker/app/tool-service.ts), read through `${DEPLOY_SECRET}`.
          DEPLOY_SECRET: 'whsec_dGVzdC1kZXBsb3ktc2VydmljZS1zZWNyZXQtMzI=',
          TEST_MIGRATIONS: migrations,
        },
        serviceBindings: { LUA_BUNDLE: 'lua-bundle' },
        workers: [
          {
            name: 'lua-bundle',
            modules: true,
            scriptPath: bundleEntry,
            modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
            compatibilityDate: deployed.compatibility_date,
            compatibilityFlags: deployed.compatibility_flags,
          },
        ],
      },
    }),
  ],
  test: {
    include: ['test/worker/**/*.test.ts'],
    // Three runtimes (a Miniflare each, its workerd and the test Worker's modules loaded
    // once), each running the files it is given one after another: a runtime of its own per
    // file cost about 5 s of setup each. A file still starts from the state it assumes, as
    // a new runtime would give it (fresh-state.ts: no Durable Object, empty KV and D1, the
    // test Worker's seams and logs reset, no Lua VM open). Three rather than two: much of a
    // file's time is waiting (on alarms, retries, a server on the Node side), which
    // another runtime's tests fill.
    isolate: false,
    maxWorkers: 3,
    // For a hang, not a slow machine (the suite must pass while another process keeps both
    // cores busy); a file that stops making progress altogether is failed by teardown-guard.ts.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Before each file, in order: the state a new runtime has, then the index's tables.
    setupFiles: ['./test/worker/fresh-state.ts', './test/worker/apply-migrations.ts'],
    // The MCP reference server, started from the Node side for the MCP Pack suites; the server with hostile tool lists; the 2026-07-28 server; the server whose tools answer with tasks.
    globalSetup: [
      './test/worker/mcp-server.setup.ts',
      './test/worker/tool-list-servers.setup.ts',
      './test/worker/modern-mcp.setup.ts',
      './test/worker/tasks-mcp.setup.ts',
    ],
    // The default report, and a failure for a run that stops making progress (teardown-guard.ts).
    reporters: ['default', './test/worker/teardown-guard.ts'],
  },
});
