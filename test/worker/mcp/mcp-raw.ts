/**
 * Raw 2026-07-28 requests to `/mcp`, for what a client library would never send: a
 * tools/call with a request state and input responses of the test's own making.
 */
import { API_TOKEN, call } from '../app/client.ts';

/** The per-request envelope of a 2026-07-28 client that takes elicitations. */
export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-agent', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

/** The JSON-RPC answer of a raw request (the last message of an SSE answer), and its HTTP status. */
export interface RawAnswer {
  status: number;
  result?: any;
  error?: { code: number; message: string; data?: any };
}

let nextId = 1;

/** Sends one JSON-RPC request of `method` with `params` (the envelope added) to `/mcp`. */
export async function rawRequest(
  method: string,
  params: object,
  options: { token?: string; headers?: Record<string, string>; capabilities?: object } = {},
): Promise<RawAnswer> {
  const envelope = options.capabilities ? { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': options.capabilities } : ENVELOPE;
  const named =
    (params as { name?: unknown; taskId?: unknown; uri?: unknown }).name ?? (params as { taskId?: unknown }).taskId ?? (params as { uri?: unknown }).uri;
  const response = await call('POST', '/mcp', {
    token: options.token ?? API_TOKEN,
    body: { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: envelope } },
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof named === 'string' ? { 'mcp-name': named } : {}),
      ...options.headers,
    },
  });
  const text = await response.text();
  const last = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .at(-1)
    : text;
  let message: any = {};
  try {
    message = JSON.parse(last ?? '{}');
  } catch {
    message = { error: { code: 0, message: text } };
  }
  return { status: response.status, ...(message.result !== undefined ? { result: message.result } : {}), ...(message.error ? { error: message.error } : {}) };
}

/** tools/call of `name` with `args`, and a request state and input responses when given. */
export const rawCallTool = (
  name: string,
  args: object,
  retry: { requestState?: string; inputResponses?: object } = {},
  options: { token?: string; headers?: Record<string, string>; capabilities?: object } = {},
): Promise<RawAnswer> => rawRequest('tools/call', { name, arguments: args, ...retry }, options);
