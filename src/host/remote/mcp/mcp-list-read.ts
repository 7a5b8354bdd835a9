/**
 * Reading an MCP server's `tools/list`, every page, within the bounds a hostile server
 * needs (issue 25): one that hands out a new cursor on every page was read forever (one
 * `GET /packs` never answered and workerd grew to 1.8 GB). A read ends, with the bound it
 * passed as its reason, past MCP_TOOL_LIST_PAGES pages, at a cursor the server gave before,
 * past MCP_TOOL_LIST_TOOLS tools, past MCP_TOOL_LIST_BYTES bytes of the server's answers
 * (counted as they stream, the handshake's too, and cut off there), or at
 * MCP_TOOL_LIST_DEADLINE_MS after it began.
 *
 * Its own client and transport, not McpConnection's: the bytes are counted over the whole
 * read, and the pages are requested as plain `tools/list` requests, because the SDK's
 * `listTools` compiles a validator of every `outputSchema` the server lists, which a
 * hostile schema would make as costly as it likes.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListToolsResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker-provider.js';
import { formatBytes } from '../../../engine/lua/run-memory.ts';
import { MCP_CONNECT_TIMEOUT_MS, shortReason, type McpEndpoint } from './mcp-connection.ts';

/** The most pages of `tools/list` read for one list. */
export const MCP_TOOL_LIST_PAGES = 100;
/** The most tools read for one list (a run keeps at most MAX_MCP_TOOLS of them: mcp-tool-list.ts). */
export const MCP_TOOL_LIST_TOOLS = 1_000;
/** The most bytes of the server's answers read for one list, the handshake's included: 8 MiB. */
export const MCP_TOOL_LIST_BYTES = 8 * 1024 * 1024;
/** How long reading one list may take, the handshake included. */
export const MCP_TOOL_LIST_DEADLINE_MS = 15_000;

/** The bounds of one read; the defaults above, smaller in tests. */
export interface ToolListBounds {
  pages: number;
  tools: number;
  bytes: number;
  deadlineMs: number;
}

/** The bounds a read has unless told otherwise. */
export const TOOL_LIST_BOUNDS: ToolListBounds = {
  pages: MCP_TOOL_LIST_PAGES,
  tools: MCP_TOOL_LIST_TOOLS,
  bytes: MCP_TOOL_LIST_BYTES,
  deadlineMs: MCP_TOOL_LIST_DEADLINE_MS,
};

/** The tools as the server listed them (not yet checked), or why the read ended without them. */
export type ToolPages = { ok: true; tools: Tool[] } | { ok: false; reason: string };

/** Client name and version the server sees. */
const CLIENT_INFO = { name: 'runvil', version: '0.1.0' };

/** Reads every page of the server's tool list, within `bounds`. Never throws. */
export async function readToolPages(endpoint: McpEndpoint, bounds: ToolListBounds = TOOL_LIST_BOUNDS): Promise<ToolPages> {
  const controller = new AbortController();
  let passed: string | null = null;
  const stop = (reason: string): ToolPages => {
    passed ??= reason;
    controller.abort(new Error(reason));
    return { ok: false, reason: passed };
  };
  const timer = setTimeout(() => stop(`its tool list took longer than ${bounds.deadlineMs / 1000} s`), bounds.deadlineMs);
  let bytes = 0;
  const fetch = countingFetch({
    room: () => bounds.bytes - bytes,
    add: (count) => {
      bytes += count;
      if (bytes <= bounds.bytes) return true;
      stop(`its tool list's answers passed ${formatBytes(bounds.bytes)}`);
      return false;
    },
  });
  // The capabilities of the client that makes the calls (McpConnection): a server may list
  // tools by what its client can do (an eliciting tool only to a client that elicits).
  const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: endpoint.headers }, fetch });
  const options = { timeout: MCP_CONNECT_TIMEOUT_MS, signal: controller.signal };
  try {
    await client.connect(transport, options);
    const tools: Tool[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, options);
      if (passed !== null) return { ok: false, reason: passed };
      tools.push(...result.tools);
      if (tools.length > bounds.tools) return stop(`its tool list passed ${bounds.tools.toLocaleString('en-US')} tools`);
      cursor = result.nextCursor;
      if (cursor === undefined) return { ok: true, tools };
      if (cursors.has(cursor)) return stop(`its tool list came back to a page it had given (cursor ${cutCursor(cursor)})`);
      if (page >= bounds.pages) return stop(`its tool list passed ${bounds.pages} pages`);
      cursors.add(cursor);
    }
  } catch (error) {
    return { ok: false, reason: passed ?? shortReason(error) };
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

function cutCursor(cursor: string): string {
  const quoted = JSON.stringify(cursor);
  return quoted.length > 40 ? `${quoted.slice(0, 40)}...` : quoted;
}

/** Statuses whose responses carry no body, which a Response cannot be made with. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A fetch whose responses' bodies are counted as they stream: `add` hears each chunk's size
 * and answers false to cut the body off there, so a body past the bound is never read whole;
 * one whose Content-Length passes the `room` left is not read at all.
 */
function countingFetch(count: { room(): number; add(bytes: number): boolean }): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    const declared = Number(response.headers.get('content-length') ?? 'NaN');
    if (Number.isFinite(declared) && declared > count.room() && !count.add(declared)) {
      await response.body.cancel().catch(() => undefined);
      throw new Error('the answer passed the bound on a tool list');
    }
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, stream) {
          if (count.add(chunk.byteLength)) stream.enqueue(chunk);
          // Erroring the stream cancels the response's body: nothing more is read off the wire.
          else stream.error(new Error('the answer passed the bound on a tool list'));
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
