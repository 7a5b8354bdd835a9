/**
 * An HTTP tool service for the e2e check (DESIGN.md Part 2, "HTTP tool services"), on a
 * free loopback port: it verifies each call's Standard Webhooks signature with the
 * `standardwebhooks` package (401 when it does not hold), logs the call (with the time it
 * arrived, `performance.now()`), and answers 202: the result comes later, when the check
 * posts it to the call's callback URL (`deliver`). `deploy/now` answers at once, 200
 * `{"output": "now"}` (the benchmark's marker of a run's next effect, bench/worker.ts).
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** The service's secret, as runvil.yaml reads it from RUNVIL_E2E_DEPLOY_SECRET. */
export const TOOL_SERVICE_SECRET = 'whsec_ZTJlLWRlcGxveS1zZXJ2aWNlLXNlY3JldC0wMDAwMDA=';

/** Starts the service; answers its URL, the calls it verified, a way to post results, and close. */
export async function startToolService() {
  const calls = [];
  const webhook = new Webhook(TOOL_SERVICE_SECRET);
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      let body;
      try {
        body = webhook.verify(text, request.headers);
      } catch {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad signature"}');
        return;
      }
      calls.push({ webhookId: request.headers['webhook-id'], body, at: performance.now() });
      if (body.tool === 'deploy/now') response.writeHead(200, { 'content-type': 'application/json' }).end('{"output":"now"}');
      else response.writeHead(202).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/runvil-tools`,
    calls,
    /** Posts a result to a callback URL with the call's token; answers the status and JSON body. */
    async deliver(url, token, result) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(result),
      });
      return { status: response.status, body: await response.json() };
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
