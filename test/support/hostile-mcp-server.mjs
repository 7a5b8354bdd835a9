/**
 * A hostile MCP server for tests, built with the official SDK: its tools answer outputs of
 * the size they are asked for (in MiB), as text or as structured content. Listens on
 * 127.0.0.1 on the port PORT names; `/mcp` answers over an SSE stream (the SDK's default),
 * `/mcp-json` as one JSON body; `/health` answers 200. Stateless: a server per request.
 * `/tools` is an HTTP tool service (DESIGN.md Part 2) that answers every call at once,
 * 200 {"output"} of the size its `mib` argument asks for (it checks no signature).
 * Prints `listening on port N` to stderr once it listens.
 */
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const MiB = 1024 * 1024;

/** Text of `mib` MiB. */
const text = (mib) => 'x'.repeat(Math.floor(mib * MiB));

function hostileServer() {
  const server = new McpServer({ name: 'hostile', version: '1.0.0' });
  server.registerTool('text', { description: 'Answers text of the size asked for.', inputSchema: { mib: z.number() } }, async ({ mib }) => ({
    content: [{ type: 'text', text: text(mib) }],
  }));
  server.registerTool(
    'data',
    {
      description: 'Answers structured content of the size asked for.',
      inputSchema: { mib: z.number() },
      outputSchema: { items: z.array(z.string()) },
    },
    async ({ mib }) => {
      // Strings of 1 KiB, as many as make `mib` MiB; the text part carries none of it (a server may leave it short).
      const items = Array.from({ length: Math.max(1, Math.floor((mib * MiB) / 1024)) }, () => 'y'.repeat(1020));
      return { structuredContent: { items }, content: [{ type: 'text', text: `${items.length} items` }] };
    },
  );
  return server;
}

/** Answers a tool call at once with an output of the size it asks for. */
function toolService(request, response) {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    const mib = Number(JSON.parse(body).arguments?.mib ?? 0);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ output: text(mib) }));
  });
}

const http = createServer(async (request, response) => {
  if (request.url === '/health') return void response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  if (request.url === '/tools') return toolService(request, response);
  if (request.url !== '/mcp' && request.url !== '/mcp-json') return void response.writeHead(404).end();
  const server = hostileServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: request.url === '/mcp-json' });
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
