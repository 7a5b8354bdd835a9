/**
 * `runvil run` with an HTTP tool service from its runvil.yaml: the call is signed (the
 * service verifies it with the `standardwebhooks` package), a 202 makes the run wait, and
 * the command line's own loopback listener takes the result posted to the callback URL, by
 * the rules of the Worker's route. The service here is a real HTTP server on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, tempDir } from './helpers.ts';

const SECRET = 'whsec_Y2xpLXRvb2wtc2VydmljZS1zZWNyZXQtMDAwMDA=';

interface Call {
  call_id: string;
  run_id: string;
  tool: string;
  arguments: { service?: string };
  callback_url: string;
  callback_token: string;
  deadline: string;
}

/** What the service saw of the callback route, by attempt. */
const seen: { status: number; body: string }[] = [];
let server: Server;
let port = 0;

/** Posts to the callback URL; the listener answers (status 0: it has closed, the run having ended). */
async function post(url: string, token: string, body: string): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

beforeAll(async () => {
  server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      let call: Call;
      try {
        call = new Webhook(SECRET).verify(text, request.headers as Record<string, string>) as Call;
      } catch {
        response.writeHead(401).end();
        return;
      }
      response.writeHead(202).end();
      // The result comes later, after a round of bad callbacks the listener must refuse.
      setTimeout(async () => {
        const other = `${call.callback_url.slice(0, -32)}${'0'.repeat(32)}`;
        seen.push(await post(call.callback_url, 'f'.repeat(64), JSON.stringify({ output: 'evil' })));
        seen.push(await post(other, call.callback_token, JSON.stringify({ output: 'evil' })));
        seen.push(await post(call.callback_url, call.callback_token, '{"output": '));
        seen.push(await post(call.callback_url, call.callback_token, JSON.stringify({ output: 'a', error: 'b' })));
        seen.push(await post(call.callback_url, call.callback_token, JSON.stringify({ output: `live: ${call.arguments.service}` })));
        seen.push(await post(call.callback_url, call.callback_token, JSON.stringify({ output: `live: ${call.arguments.service}` })));
        seen.push(await post(call.callback_url, call.callback_token, JSON.stringify({ output: 'another' })));
      }, 20);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(() => {
  server.close();
  server.closeAllConnections();
});

const PROMPT = `---
name: deploy
description: Deploys.
runvil: 0
uses: [acme/deploy]
---
# Deploy

## Go

\`\`\`lua
return 'deployed: ' .. tools.call('deploy/start', { service = 'api' })
\`\`\`
`;

describe('runvil run calling an HTTP tool service that answers 202', () => {
  it('listens on loopback for the result, refuses bad callbacks as the Worker does, and completes with the result', async () => {
    const files = await tempDir({
      'deploy.md': PROMPT,
      'runvil.yaml': `packs:\n  acme/deploy:\n    http:\n      url: http://127.0.0.1:${port}/tools\n      secret: \${DEPLOY_SECRET}\n    trusted: true\n    tools:\n      - name: start\n        description: Deploys a service.\n        parameters: { type: object, properties: { service: { type: string } } }\n`,
    });
    try {
      const result = await cli(['run', files.path('deploy.md'), '--config', files.path('runvil.yaml')], { env: { DEPLOY_SECRET: SECRET } });
      expect(result).toMatchObject({ status: 0, stdout: 'deployed: live: api\n' });
      // The run ended as the first good result came; the later posts may have reached a closed listener.
      for (let i = 0; i < 200 && seen.length < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(seen.slice(0, 5).map((answer) => answer.status)).toEqual([401, 401, 400, 400, 200]);
      expect(JSON.parse(seen[4]!.body)).toEqual({ accepted: true });
    } finally {
      await files.cleanup();
    }
  });

  it("names the missing ${NAME} of the Pack's secret in the requirements notice", async () => {
    const files = await tempDir({
      'deploy.md': PROMPT,
      'runvil.yaml': `packs:\n  acme/deploy:\n    http:\n      url: http://127.0.0.1:${port}/tools\n      secret: \${DEPLOY_SECRET}\n    tools:\n      - name: start\n`,
    });
    try {
      const result = await cli(['run', files.path('deploy.md'), '--config', files.path('runvil.yaml')], { env: {} });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('deploy is unavailable: runvil.yaml needs the environment variable DEPLOY_SECRET, which is not set');
    } finally {
      await files.cleanup();
    }
  });
});
