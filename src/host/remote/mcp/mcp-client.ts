/**
 * The client Runvil is to an MCP server, and what it speaks over: the SDK's v2 client
 * (`@modelcontextprotocol/client`), which negotiates the protocol with each server: a
 * `server/discover` probe first, 2026-07-28 when the server answers it, else the 2025-11-25
 * `initialize` handshake as before. One client shape for the calls (mcp-connection.ts) and
 * the tool-list read (mcp-list-read.ts): a server may list tools by what its client can do
 * (an eliciting tool only to a client that elicits). The SDK's JSON Schema validator is the
 * one on @cfworker/json-schema: the Node default compiles code at run time, which workerd
 * refuses, and one validator everywhere keeps Node and workerd alike.
 *
 * The transport is made by a factory the caller gives: production's is Streamable HTTP
 * (`streamableHttp`), every request through the fetch that bounds the server's answers;
 * tests that need no server give one linked to an McpServer in the same process (the SDK's
 * InMemoryTransport), which has no HTTP and so no use for the fetch.
 */
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/client/validators/cf-worker';
import { TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';

/** Where a server is, with the `${NAME}` references of its configuration resolved. */
export interface McpEndpoint {
  url: string;
  headers: Record<string, string>;
}

/** Makes the transport to the server at `endpoint`; an HTTP transport sends every request through `fetch`. */
export type McpTransportFactory = (endpoint: McpEndpoint, fetch: typeof globalThis.fetch) => Transport | Promise<Transport>;

/** Production's transport: Streamable HTTP to the endpoint's URL, with its headers. */
export const streamableHttp: McpTransportFactory = (endpoint, fetch) =>
  new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: endpoint.headers }, fetch });

/** How long the handshake and a `tools/list` page may take. */
export const MCP_CONNECT_TIMEOUT_MS = 10_000;

/** Client name and version the server sees. */
const CLIENT_INFO = { name: 'runvil', version: '0.1.0' };

/**
 * A client not yet connected, declaring form elicitation, negotiating the protocol version
 * (`auto`: the v2 client's default is the 2025 handshake alone). `inputRequired` is how a
 * 2026-07-28 server's `input_required` answers are met: fulfilled by the client's
 * elicitation handler (the default), or handed back to the caller (`manual`).
 */
export function newMcpClient(inputRequired: 'auto' | 'manual' = 'auto'): Client {
  return new Client(CLIENT_INFO, {
    // The tasks extension: a server may answer a call with a task, which the Pack follows (mcp-tasks.ts).
    capabilities: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION_ID_V2]: {} } },
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    versionNegotiation: { mode: 'auto' },
    ...(inputRequired === 'manual' ? { inputRequired: { autoFulfill: false } } : {}),
  });
}

/** A short reason for a failure to reach or use a server: the error's first line, bounded. */
export function shortReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  let text = error instanceof Error ? error.message : String(error);
  // Node's fetch says only "fetch failed"; the cause says why (ECONNREFUSED, ...).
  if (text === 'fetch failed' && cause && typeof cause.message === 'string') text = `${text}: ${cause.message}`;
  text = text.split('\n')[0]!.trim();
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
