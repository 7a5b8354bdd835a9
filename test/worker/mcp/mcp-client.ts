/**
 * The SDK's own MCP client (v2) talking to the test Worker's `/mcp` over a fetch transport:
 * each request goes through the app as an HTTP request would (app/client.ts), so the
 * client, the transport and the server are the real ones.
 */
import { Client, StreamableHTTPClientTransport, type ElicitResult } from '@modelcontextprotocol/client';
import app from '../app/test-worker.ts';
import { API_TOKEN, testEnv } from '../app/client.ts';

/** The protocol eras the tests speak: 2025-11-25 (`initialize`, sessions) and 2026-07-28 (stateless, `server/discover`). */
export type Era = 'legacy' | 'modern';

/** How the client answers an elicitation; null: the client has no elicitation capability. */
export type Elicitor = ((params: { message: string; requestedSchema: any }) => ElicitResult | Promise<ElicitResult>) | null;

/** Options of a test client. */
export interface ClientOptions {
  token?: string;
  elicit?: Elicitor;
  name?: string;
  headers?: Record<string, string>;
  /** The transport's fetch; by default appFetch. */
  fetch?: typeof appFetch;
}

/** The fetch the transport uses: into the test app. */
export const appFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => app.fetch(new Request(url, init), testEnv);

/** A connected client of `era`. */
export async function mcpClient(era: Era, options: ClientOptions = {}): Promise<Client> {
  const elicit = options.elicit ?? null;
  const client = new Client(
    { name: options.name ?? 'test-agent', version: '1.0.0' },
    {
      capabilities: elicit ? { elicitation: { form: {} } } : {},
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    },
  );
  if (elicit) client.setRequestHandler('elicitation/create', async (request) => elicit(request.params as any));
  const transport = new StreamableHTTPClientTransport(new URL('https://runvil.test/mcp'), {
    fetch: options.fetch ?? appFetch,
    requestInit: { headers: { authorization: `Bearer ${options.token ?? API_TOKEN}`, ...options.headers } },
  });
  await client.connect(transport);
  return client;
}
