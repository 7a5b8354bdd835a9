/**
 * The Node test run (`vitest run`). The suites under test/worker/ run inside workerd
 * instead, with vitest.workers.config.ts (`npm run test:workers`); those under test/browser/
 * in chromium against the local server, with vitest.browser.config.ts (`npm run test:browser`).
 *
 * The timeouts are for a hang, not for a slow machine: `npm test` runs beside other suites on
 * two cores, and must pass while another process keeps both busy, so a test that takes 1 s
 * when the machine is idle may take 10 s then. A test that bounds the code it tests sets
 * that bound itself, on that code.
 */
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    exclude: [...configDefaults.exclude, 'test/worker/**', 'test/browser/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two files at a time on two cores (vitest's default is one fewer than the cores): a
    // file's waits (a server on loopback, a child process) leave the other room to compute.
    maxWorkers: 2,
    // Each worker runs its files one after another in one module graph, rather than loading
    // the Engine, wasmoon and the SDKs again for every file: that loading was half the suite's
    // CPU (test/engine alone: 85 s isolated, 44 s not). Module state a test may change is
    // put back by the test that changes it (a stubbed fetch, in a finally); a cache such as
    // the Lua platform is the same for every file.
    isolate: false,
  },
});
