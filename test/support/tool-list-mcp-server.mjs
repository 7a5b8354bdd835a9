/**
 * An MCP server for tests whose `tools/list` is hostile, built with the official SDK (its
 * low-level Server, which lets a handler answer any page and cursor). Listens on 127.0.0.1
 * on the port PORT names; `/<mode>/mcp` is an MCP endpoint (stateless: a server per
 * request) whose tool list is the mode's:
 *
 *   pages-forever   a new cursor on every page, without end
 *   cycle           pages A -> B -> A -> ...
 *   same-cursor     the same cursor on every page
 *   many-tools      5,000 small tools on one page
 *   many-pages      40 pages of 50 tools
 *   huge-page       one page of 20 MiB (a tool whose description is that long)
 *   mib-pages       pages of 1 MiB each, without end
 *   never           answers the handshake, never `tools/list`
 *   slow-pages      each page after 200 ms, a new cursor every time
 *   schemas         a tool nested 1,000 levels deep, one 100 KB long, one with a lookahead pattern, and fine ones
 *   patterns        tools whose `pattern`, `patternProperties` and `propertyNames` backtrack on V8; calls answer "accepted"
 *   fine            two ordinary tools
 *
 * `/health` answers 200; `/reads/<mode>` answers how many `tools/list` requests the mode
 * has served, as JSON. Prints `listening on port N` to stderr once it listens.
 */
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const MiB = 1024 * 1024;
const reads = new Map();

const tool = (name, inputSchema = { type: 'object', properties: {} }, description = `The tool ${name}.`) => ({ name, description, inputSchema });
const nested = (depth) => {
  let schema = { type: 'string' };
  for (let level = 1; level < depth; level++) schema = { type: 'object', properties: { a: schema } };
  return schema;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Patterns that backtrack exponentially on a backtracking engine. */
const CATASTROPHIC = ['^(a|a)*$', '^(a+)+$', '(x+x+)+y', '^(\\w+\\s?)*$'];

/** One page of the mode's list, for the request's cursor. */
async function page(mode, cursor) {
  const n = cursor === undefined ? 0 : Number(cursor.replace(/\D/g, '')) || 0;
  switch (mode) {
    case 'pages-forever':
      return { tools: [tool(`t${n}`)], nextCursor: `page-${n + 1}` };
    case 'cycle':
      return { tools: [tool(`t${cursor ?? 'start'}`)], nextCursor: cursor === 'A' ? 'B' : 'A' };
    case 'same-cursor':
      return { tools: [tool(`t${n}`)], nextCursor: 'again' };
    case 'many-tools':
      return { tools: Array.from({ length: 5_000 }, (_, i) => tool(`t${i}`)) };
    case 'many-pages':
      return { tools: Array.from({ length: 50 }, (_, i) => tool(`t${n}-${i}`)), ...(n < 39 ? { nextCursor: `page-${n + 1}` } : {}) };
    case 'huge-page':
      return { tools: [tool('huge', undefined, 'x'.repeat(20 * MiB))] };
    case 'mib-pages':
      return { tools: [tool(`t${n}`, undefined, 'x'.repeat(MiB))], nextCursor: `page-${n + 1}` };
    case 'never':
      return new Promise(() => {});
    case 'slow-pages':
      await sleep(200);
      return { tools: [tool(`t${n}`)], nextCursor: `page-${n + 1}` };
    case 'schemas':
      return {
        tools: [
          tool('deep', nested(1_000)),
          tool('long', { type: 'object', properties: Object.fromEntries(Array.from({ length: 4_000 }, (_, i) => [`field_${i}`, { type: 'string' }])) }),
          tool('lookahead', { type: 'object', properties: { password: { type: 'string', pattern: '^(?=.*\\d).{8,}$' } } }),
          tool('fine', { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]{3}$' } } }),
        ],
      };
    case 'patterns':
      return {
        tools: [
          tool('pattern', { type: 'object', properties: Object.fromEntries(CATASTROPHIC.map((p, i) => [`v${i}`, { type: 'string', pattern: p }])) }),
          tool('pattern-properties', { type: 'object', patternProperties: Object.fromEntries(CATASTROPHIC.map((p) => [p, { type: 'integer' }])) }),
          tool('property-names', { type: 'object', propertyNames: { pattern: CATASTROPHIC[0] } }),
        ],
      };
    default:
      return { tools: [tool('echo'), tool('add')] };
  }
}

function serverFor(mode) {
  const server = new Server({ name: `tool-list-${mode}`, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    reads.set(mode, (reads.get(mode) ?? 0) + 1);
    return page(mode, request.params?.cursor);
  });
  server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'accepted' }] }));
  return server;
}

const http = createServer(async (request, response) => {
  const url = request.url ?? '';
  if (url === '/health') return void response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  const counted = /^\/reads\/([a-z-]+)$/.exec(url);
  if (counted) return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reads.get(counted[1]) ?? 0));
  const endpoint = /^\/([a-z-]+)\/mcp$/.exec(url);
  if (!endpoint) return void response.writeHead(404).end();
  const server = serverFor(endpoint[1]);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  response.on('close', () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(request, response);
  } catch {
    if (!response.headersSent) response.writeHead(500).end();
  }
});

http.listen(Number(process.env.PORT), '127.0.0.1', () => process.stderr.write(`listening on port ${process.env.PORT}\n`));
