/**
 * The browser run (`npm run test:browser`): test/browser/ drives Debian's chromium with
 * playwright-core against the real local server, one for every file (server.setup.ts starts
 * it on a free port with its own state directory and gives the files its address and token).
 * One file at a time: each starts a browser.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['./test/browser/server.setup.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
