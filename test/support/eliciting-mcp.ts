/**
 * An MCP server for the elicitation tests, built with the official SDK and reached in the
 * test's process (memory-mcp.ts): its tool `elicit` sends the client the elicitation request
 * it is given (message and requested schema, as JSON text) without the SDK's checks of
 * either, and answers the client's raw reply as JSON text, so a test sees exactly what
 * Runvil sent back.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { MemoryServer } from './memory-mcp.ts';

/** A new eliciting server, for one connection. */
export function elicitingServer(): MemoryServer {
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
  return { server };
}
