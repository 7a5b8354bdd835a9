/**
 * What a session brought back from storage needs of the SDK's transport and server
 * (@modelcontextprotocol/server, pinned at 2.4.0) that they do not offer: the SDK assumes
 * a session lives in one process's memory. Each reach past its public face is here, once,
 * with why, so an upgrade of the SDK has one place to check (test/worker/mcp-sessions.test.ts
 * fails if any of them stops working).
 *
 * - The handshake is replayed through the public `handleRequest`: the stored `initialize`,
 *   then `notifications/initialized`, give a new server and transport the state the first
 *   ones had (initialised, the negotiated version, the client's capabilities and name).
 * - A call continued after a restart is answered on a stream the client listens on: the one
 *   its question went out on, which the client resumes with `Last-Event-ID` when the
 *   transport keeps events, else the client's standalone GET stream, which it opens again.
 *   The transport maps a request id to its stream only for requests it received itself, and
 *   this call was received by the transport that is gone.
 * - The ids of the server's own requests start again at 0 in a new server; they are raised
 *   above those of the questions a client may still answer.
 */
import type { JSONRPCMessage, Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { RequestId } from './session-state.ts';

interface TransportInternals {
  _requestToStreamMapping: Map<RequestId, string>;
  _standaloneSseStreamId: string;
}

interface ServerInternals {
  _requestMessageId: number;
}

const internals = (transport: WebStandardStreamableHTTPServerTransport): TransportInternals => transport as unknown as TransportInternals;

/** The stream the transport answers request `id` on, or null. */
export function streamOf(transport: WebStandardStreamableHTTPServerTransport, id: RequestId): string | null {
  return internals(transport)._requestToStreamMapping?.get(id) ?? null;
}

/** The id of the transport's standalone stream (the client's GET without `Last-Event-ID`). */
export function standaloneStream(transport: WebStandardStreamableHTTPServerTransport): string {
  return internals(transport)._standaloneSseStreamId ?? '_GET_stream';
}

/** Answers request `id` on `stream` (a client resumes it with `Last-Event-ID`; the event store keeps what it missed). */
export function answerOn(transport: WebStandardStreamableHTTPServerTransport, id: RequestId, stream: string): void {
  internals(transport)._requestToStreamMapping?.set(id, stream);
}

/** Makes `server`'s next request id at least `floor`. */
export function raiseRequestIds(server: Server, floor: number): void {
  const inner = server as unknown as ServerInternals;
  if (typeof inner._requestMessageId === 'number' && inner._requestMessageId < floor) inner._requestMessageId = floor;
}

/** Replays the client's handshake into a new transport (connected to its server): the state the first one reached. */
export async function replayHandshake(
  transport: WebStandardStreamableHTTPServerTransport,
  url: string,
  initialize: Record<string, unknown>,
  sessionId: string,
): Promise<boolean> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const opened = await transport.handleRequest(
    new Request(url, { method: 'POST', headers, body: JSON.stringify(message({ id: 'restore', method: 'initialize', params: initialize })) }),
  );
  // The answer is the first handshake's, which the client has; it is read to its end and dropped.
  await opened.text();
  if (!opened.ok) return false;
  const initialized = await transport.handleRequest(
    new Request(url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': sessionId },
      body: JSON.stringify(message({ method: 'notifications/initialized' })),
    }),
  );
  await initialized.text();
  return initialized.ok;
}

function message(fields: { id?: RequestId; method: string; params?: Record<string, unknown> }): JSONRPCMessage {
  return { jsonrpc: '2.0', ...fields } as JSONRPCMessage;
}
