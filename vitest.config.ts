/**
 * The Node test run (`vitest run`). The suites under test/worker/ run inside workerd
 * instead, with vitest.workers.config.ts (`npm run test:workers`); those under test/browser/
 * in chromium against the local server, with vitest.browser.config.ts (`npm run test:browser`).
 */
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    exclude: [...configDefaults.exclude, 'test/worker/**', 'test/browser/**'],
  },
});
