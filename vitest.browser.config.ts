/**
 * The browser run (`npm run test:browser`): test/browser/ drives Debian's chromium with
 * playwright-core against the real local server, which each file starts on a free port
 * with its own state directory. One file at a time: each starts a server and a browser.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
