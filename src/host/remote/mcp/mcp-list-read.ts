/**
 * Reading an MCP server's `tools/list`, every page, within the bounds a hostile server
 * needs (issue 25): one that hands out a new cursor on every page was read forever (one
 * `GET /packs` never answered and workerd grew to 1.8 GB). A read ends, with the bound it
 * passed as its reason, past MCP_TOOL_LIST_PAGES pages, at a cursor the server gave before,
 * past MCP_TOOL_LIST_TOOLS tools, past MCP_TOOL_LIST_BYTES bytes of the server's answers
 * (counted as they stream, the handshake's too, and cut off there), or at
 * MCP_TOOL_LIST_DEADLINE_MS after it began.
 *
 * Its own connection, not McpConnection's: the bytes are counted over the whole read (one
 * budget for every answer), and the pages are requested as plain `tools/list` requests,
 * because the SDK's `listTools` compiles a validator of every `outputSchema` the server
 * lists, which a hostile schema would make as costly as it likes; and each page is checked by
 * a shallow schema of our own (`TOOL_PAGE`): the v2 client's schema of a tool list walks every
 * `inputSchema` to its depth, and a schema 1,000 levels deep overflowed its stack before
 * tool-list.ts could leave that one tool out. Over a transport without
 * HTTP (tests' in-memory one) there are no bytes to count; the other bounds hold.
 */
import type { StandardSchemaV1, Tool } from '@modelcontextprotocol/client';
import { formatBytes } from '../../../engine/lua/run-memory.ts';
import { byteBudget, countingFetch } from '../bounded-body.ts';
import { MCP_CONNECT_TIMEOUT_MS, newMcpClient, shortReason, streamableHttp, type McpEndpoint, type McpTransportFactory } from './mcp-client.ts';

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

/** Reads every page of the server's tool list, within `bounds`, over the transport `transport` makes. Never throws. */
export async function readToolPages(
  endpoint: McpEndpoint,
  bounds: ToolListBounds = TOOL_LIST_BOUNDS,
  transport: McpTransportFactory = streamableHttp,
): Promise<ToolPages> {
  const controller = new AbortController();
  let passed: string | null = null;
  const stop = (reason: string): ToolPages => {
    passed ??= reason;
    controller.abort(new Error(reason));
    return { ok: false, reason: passed };
  };
  const timer = setTimeout(() => stop(`its tool list took longer than ${bounds.deadlineMs / 1000} s`), bounds.deadlineMs);
  const budget = byteBudget(bounds.bytes, () => stop(`its tool list's answers passed ${formatBytes(bounds.bytes)}`));
  const fetch = countingFetch(() => budget);
  const client = newMcpClient();
  const options = { timeout: MCP_CONNECT_TIMEOUT_MS, signal: controller.signal };
  try {
    await client.connect(await transport(endpoint, fetch), options);
    const tools: Tool[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, TOOL_PAGE, options);
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

/** One page of `tools/list`, checked no deeper than its tools' names: mcp-tool-list.ts checks each tool. */
const TOOL_PAGE: StandardSchemaV1<unknown, { tools: Tool[]; nextCursor?: string }> = {
  '~standard': {
    version: 1,
    vendor: 'runvil',
    validate(value) {
      const page = value as { tools?: unknown; nextCursor?: unknown } | null;
      if (typeof page !== 'object' || page === null || !Array.isArray(page.tools))
        return { issues: [{ message: 'a tools/list answer without a tools array' }] };
      if (!page.tools.every((tool: unknown) => typeof tool === 'object' && tool !== null && typeof (tool as { name?: unknown }).name === 'string')) {
        return { issues: [{ message: 'a tools/list answer with a tool that has no name' }] };
      }
      if (page.nextCursor !== undefined && typeof page.nextCursor !== 'string')
        return { issues: [{ message: 'a tools/list answer whose nextCursor is not text' }] };
      return { value: { tools: page.tools as Tool[], ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) } };
    },
  },
};

function cutCursor(cursor: string): string {
  const quoted = JSON.stringify(cursor);
  return quoted.length > 40 ? `${quoted.slice(0, 40)}...` : quoted;
}
