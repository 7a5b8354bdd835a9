/**
 * `runvil deploy-check`'s command line: its usage errors (exit status 2, naming what was
 * wrong), its help, and what it says when it cannot read the deployment (exit status 1 with
 * what to do). The check itself runs against the real local server in scripts/e2e-deploy.mjs.
 */
import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../src/cli/args.ts';
import { freePort } from '../../scripts/local-server.mjs';
import { cli } from './helpers.ts';

function usageMessage(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`no usage error for ${JSON.stringify(argv)}`);
}

describe('runvil deploy-check arguments', () => {
  it('reads the deployment, the key, --force, --concurrency and --config', () => {
    expect(parseCommandLine(['deploy-check', '--url', 'https://runvil.example.com/'])).toEqual({
      command: 'deploy-check',
      target: { url: 'https://runvil.example.com' },
      force: false,
    });
    expect(
      parseCommandLine(['deploy-check', '--url', 'http://127.0.0.1:8787', '--token', 't', '--force', '--concurrency', '3', '--config', 'prod.yaml']),
    ).toEqual({ command: 'deploy-check', target: { url: 'http://127.0.0.1:8787', token: 't' }, force: true, concurrency: 3, config: 'prod.yaml' });
    expect(parseCommandLine(['deploy-check', '--help'])).toEqual({ command: 'help', topic: 'deploy-check' });
  });

  it.each([
    [
      ['deploy-check'],
      'runvil deploy-check needs --url URL: the address of the deployment about to be deployed to, such as https://runvil.example.workers.dev',
    ],
    [['deploy-check', '--url', 'runvil.example.com'], '--url takes the deployment\'s address, http:// or https://, got "runvil.example.com"'],
    [['deploy-check', '--url', 'ftp://runvil.example.com'], '--url takes the deployment\'s address, http:// or https://, got "ftp://runvil.example.com"'],
    [['deploy-check', '--url'], 'option --url needs a value'],
    [['deploy-check', '--url', 'http://x', 'prod'], 'runvil deploy-check takes no operands, got prod: the deployment is --url URL'],
    [['deploy-check', '--url', 'http://x', '--concurrency', '0'], '--concurrency takes the number of replay threads, a whole number from 1 to 256, got "0"'],
    [
      ['deploy-check', '--url', 'http://x', '--concurrency', 'many'],
      '--concurrency takes the number of replay threads, a whole number from 1 to 256, got "many"',
    ],
    [
      ['deploy-check', '--url', 'http://x', '--concurrency', '1000'],
      '--concurrency takes the number of replay threads, a whole number from 1 to 256, got "1000"',
    ],
    [['deploy-check', '--url', 'http://x', '--force=yes'], 'option --force takes no value'],
    [['deploy-check', '--url', 'http://x', '--dry-run'], 'unknown option --dry-run for runvil deploy-check'],
  ])('refuses %j: %s', (argv, message) => {
    expect(usageMessage(argv)).toBe(message);
  });

  it('exits 2 with the usage error, and 2 without a key', async () => {
    expect(await cli(['deploy-check'])).toMatchObject({
      status: 2,
      stdout: '',
      stderr: expect.stringContaining('runvil: runvil deploy-check needs --url URL'),
    });
    const keyless = await cli(['deploy-check', '--url', 'http://127.0.0.1:9']);
    expect(keyless).toMatchObject({ status: 2, stderr: expect.stringContaining("this command needs the deployment's root key: set RUNVIL_API_TOKEN") });
  });

  it('is in the help, with its own', async () => {
    expect((await cli(['help'])).stdout).toContain('runvil deploy-check --url URL');
    const help = await cli(['help', 'deploy-check']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: runvil deploy-check --url URL \[--token TOKEN\] \[--force\] \[--concurrency N\] \[--config FILE\]/);
  });
});

describe('runvil deploy-check when it cannot read the deployment', () => {
  it('says that nobody answers at the address, and what to check', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await cli(['deploy-check', '--url', url], { env: { RUNVIL_API_TOKEN: 'root' } });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `runvil: cannot reach ${url}: ECONNREFUSED\n  check --url: is the deployment running there? (\`npm start\` serves one locally and prints its address; a deployed Worker's is in \`wrangler deploy\`'s output)\n`,
    );
  });

  it('says that a server which answers without JSON is no Runvil deployment', async () => {
    const server: Server = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>hello</h1>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const result = await cli(['deploy-check', '--url', `http://127.0.0.1:${port}`], { env: { RUNVIL_API_TOKEN: 'root' } });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('answered GET /runs?status=suspended&limit=200 with 200 and no JSON: it does not look like a Runvil deployment');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
