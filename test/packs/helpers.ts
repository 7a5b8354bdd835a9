/**
 * Test helpers for the Packs: a real HTTP server on 127.0.0.1 for the test's own routes,
 * and a ToolContext over a scripted operator and a plain service record.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolContext } from '../../src/host/pack.ts';
import { ScriptedOperator, type Operator } from '../../src/host/operator.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';

/** One request the test server received, body read in full. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local server: its base address, what it was asked, and how to stop it. */
export interface TestServer {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 (a free port) answering with `handler`. */
export async function startServer(handler: (request: SeenRequest, response: ServerResponse) => unknown): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const seen = {
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      void Promise.resolve(handler(seen, response)).catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A ToolContext for one call: services by name, an operator, an optional signal. */
export function toolContext(options: { services?: Record<string, unknown>; operator?: Operator; signal?: AbortSignal } = {}): ToolContext {
  const services = options.services ?? {};
  return {
    runId: 'run-1',
    store: new MemoryRunStore(),
    operator: options.operator ?? new ScriptedOperator([]),
    services: { get: <T>(name: string) => services[name] as T | undefined },
    ...(options.signal ? { signal: options.signal } : {}),
  };
}
