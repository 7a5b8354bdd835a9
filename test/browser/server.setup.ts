/**
 * The one local server the browser tests share (vitest's globalSetup): `npm start` on a free
 * port with its own state directory, started once for every file rather than once per file
 * (a start is about 13 s of CPU). Its runs reach a model server and a page on loopback
 * (loopback.ts). The files keep their data apart by their own prompts, runs and keys, and a
 * file that reads a list looks for its own rows in it.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { freePort, killLocalServer, startLocalServer } from '../../scripts/local-server.mjs';
import { startLoopback } from './loopback.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared local server: its origin, its root token, and the loopback server's origin. */
    browserServer: { base: string; token: string; loopbackBase: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stateDir = join(root, `.wrangler/browser-state-${process.pid}`);
  const token = randomBytes(16).toString('hex');
  const loopback = await startLoopback();
  let server;
  try {
    server = await startLocalServer({
      port: await freePort(),
      token,
      stateDir,
      env: {
        OPENAI_API_KEY: 'loopback-model-key',
        OPENAI_BASE_URL: `${loopback.base}/v1`,
        // runvil/web serves only with a search provider configured; the runs only fetch.
        TAVILY_API_KEY: 'unused-by-these-tests',
      },
    });
  } catch (error) {
    await loopback.close();
    throw error;
  }
  project.provide('browserServer', { base: server.base, token, loopbackBase: loopback.base });
  return async () => {
    await killLocalServer(server);
    await loopback.close();
    rmSync(stateDir, { recursive: true, force: true });
  };
}
