/**
 * An HTTP tool service for the workerd tests, `acme/deploy`, answered inside the isolate
 * (the tests have no network): the run object's calls reach it through the Pack's `fetch`,
 * signed for real; it verifies each with the `standardwebhooks` package, as a service would,
 * logs what it got, and answers by tool:
 *
 *   deploy/start   202: the result comes later (the test posts it to the callback URL)
 *   deploy/now     200 {"output": "live: <service>"}
 *   deploy/broken  200 {"error": "deploy failed: <service>"}
 *   deploy/refuse  404
 *   deploy/flaky   503 on the first try of each call, then 202
 *   deploy/down    503, always
 *   deploy/hang    never answers the first try of each call (so a run dropped then sends it again), then 202
 *   deploy/early   posts the result to the callback itself, then answers 202
 *   deploy/quick   202; its timeout is 1 s
 */
import { Webhook } from 'standardwebhooks';
import type { ConfiguredPack } from '../../../src/config/deployment-config.ts';

/** The service's secret (vitest.workers.config.ts binds it as DEPLOY_SECRET). */
export const DEPLOY_SECRET = 'whsec_dGVzdC1kZXBsb3ktc2VydmljZS1zZWNyZXQtMzI=';

/** `acme/deploy` as runvil.yaml would configure it. */
export const DEPLOY_PACK: ConfiguredPack = {
  fqName: 'acme/deploy',
  description: 'Deploys services.',
  trusted: true,
  source: {
    kind: 'http',
    url: 'https://deploy.test/runvil-tools',
    secret: '${DEPLOY_SECRET}',
    tools: ['start', 'now', 'broken', 'refuse', 'flaky', 'down', 'hang', 'early', 'quick'].map((name) => ({
      name,
      description: `Deploy (${name}).`,
      parameters: { type: 'object', properties: { service: { type: 'string' } } },
      output: 'plain' as const,
      timeoutSeconds: name === 'quick' ? 1 : 900,
    })),
  },
};

/** One call the service received: its headers' id, its verified body, and its try. */
export interface ReceivedCall {
  webhookId: string;
  body: {
    type: string;
    run_id: string;
    call_id: string;
    tool: string;
    arguments: { service?: string };
    callback_url: string;
    callback_token: string;
    deadline: string;
  };
  tries: number;
}

/** Every call the service received and verified, in order. */
export const received: ReceivedCall[] = [];

/** Every request the service refused for a bad signature. */
export const unsigned: string[] = [];

/** The calls received for one run. */
export const receivedBy = (runId: string) => received.filter((call) => call.body.run_id === runId);

const triesOf = new Map<string, number>();

/** Forgets the calls received and refused (test-worker.ts's resetTestWorker, before each test file). */
export function resetToolService(): void {
  received.splice(0);
  unsigned.splice(0);
  triesOf.clear();
}

/** The service's fetch; `deliver` posts a result to a callback URL (the test app). */
export function deployService(deliver: (url: string, token: string, result: object) => Promise<Response>): typeof fetch {
  return async (input, init) => {
    const text = String(init?.body ?? '');
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => (headers[key] = value));
    let body: ReceivedCall['body'];
    try {
      body = new Webhook(DEPLOY_SECRET).verify(text, headers) as ReceivedCall['body'];
    } catch {
      unsigned.push(String(input));
      return new Response('bad signature', { status: 401 });
    }
    const tries = (triesOf.get(body.call_id) ?? 0) + 1;
    triesOf.set(body.call_id, tries);
    received.push({ webhookId: headers['webhook-id']!, body, tries });
    const service = body.arguments.service ?? '';
    switch (body.tool) {
      case 'deploy/now':
        return Response.json({ output: `live: ${service}` });
      case 'deploy/broken':
        return Response.json({ error: `deploy failed: ${service}` });
      case 'deploy/refuse':
        return new Response('no such service', { status: 404 });
      case 'deploy/flaky':
        return tries === 1 ? new Response('busy', { status: 503 }) : new Response(null, { status: 202 });
      case 'deploy/down':
        return new Response('down', { status: 503 });
      case 'deploy/hang':
        if (tries === 1) return new Promise<Response>(() => {});
        return new Response(null, { status: 202 });
      case 'deploy/early':
        await deliver(body.callback_url, body.callback_token, { output: `early: ${service}` });
        return new Response(null, { status: 202 });
      default:
        return new Response(null, { status: 202 });
    }
  };
}
