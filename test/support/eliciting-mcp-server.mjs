/**
 * An MCP server for the elicitation tests, built with the official SDK: its tool `elicit`
 * sends the client the elicitation request it is given (message and requested schema, as
 * JSON text) without the SDK's checks of either, and answers the client's raw reply as JSON
 * text, so a test sees exactly what Runvil sent back. Sessions are kept (an elicitation's
 * reply arrives on a request of its own). Listens on 127.0.0.1 on the port PORT names;
 * prints `listening on port N` to stderr once it does.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

function elicitingServer() {
  const server = new McpServer({ name: 'eliciting', version: '1.0.0' });
  server.registerTool(
    'elicit',
    {
      description: 'Sends the elicitation it is given; answers what came back.',
      inputSchema: { message: z.string().optional(), repeat: z.number().optional(), schema: z.string() },
    },
    async ({ message, repeat, schema }) => {
      const text = repeat ? 'x'.repeat(repeat) : (message ?? 'Tell me');
      try {
        const reply = await server.server.request(
          { method: 'elicitation/create', params: { message: text, requestedSchema: JSON.parse(schema) } },
          ElicitResultSchema,
        );
        return { content: [{ type: 'text', text: JSON.stringify(reply) }] };
      } catch (error) {
        return { content: [{ type: 'text', text: `elicitation failed: ${error instanceof Error ? error.message : String(error)}` }] };
      }
    },
  );
  return server;
}

const sessions = new Map();

const http = createServer(async (request, response) => {
  if (request.url === '/health') return void response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  if (request.url !== '/mcp') return void response.writeHead(404).end();
  try {
    const id = request.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => sessions.set(sid, created) });
      created.onclose = () => created.sessionId && sessions.delete(created.sessionId);
      await elicitingServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response);
  } catch {
    if (!response.headersSent) response.writeHead(500).end();
  }
});

http.listen(Number(process.env.PORT), '127.0.0.1', () => process.stderr.write(`listening on port ${process.env.PORT}\n`));
