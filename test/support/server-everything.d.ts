/** The reference server's factory, which its package ships without types. */
declare module '@modelcontextprotocol/server-everything/dist/server/index.js' {
  import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
  export function createServer(): { server: McpServer; cleanup: (sessionId?: string) => void };
}
