/**
 * The workerd test run (`npm run test:workers`): test/worker/ inside workerd, through
 * @cloudflare/vitest-pool-workers with the Worker's own wrangler.toml.
 *
 * The pool loads modules through Vite with nodejs_compat forced on, which is not how the
 * Worker is deployed; so the script first builds test/worker/bundle/entry.ts with wrangler
 * (wrangler.toml's rules and alias, its compatibility settings) into BUNDLE_DIR, and the
 * pool runs that bundle as a second Worker, bound to the tests as LUA_BUNDLE.
 */
import { existsSync } from 'node:fs';
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { unstable_readConfig } from 'wrangler';

const WRANGLER_CONFIG = './wrangler.toml';
const BUNDLE_DIR = '.wrangler/test-bundle';

const bundleEntry = `${BUNDLE_DIR}/entry.js`;
if (!existsSync(bundleEntry)) {
  throw new Error(`${bundleEntry} is missing: run \`npm run test:workers\`, which builds it first`);
}
const deployed = unstable_readConfig({ config: WRANGLER_CONFIG });

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: WRANGLER_CONFIG },
      miniflare: {
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
  },
});
