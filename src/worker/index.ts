/**
 * The Worker entry: Runvil's Hono app on Cloudflare Workers, with OAuth 2.1 for `/mcp`
 * around it (oauth/oauth-worker.ts: every other request reaches the app as it is), and the
 * run Durable Object.
 */
import './workerd-lua/lua-factory.ts'; // first: workerd-lua/README.md, "It loads first"
import { createApp } from './app.ts';
import { withOAuth } from './oauth/oauth-worker.ts';

export { RunObject } from './run-object/run-object.ts';
export { McpSession } from './mcp/mcp-session.ts';

/** The Worker's fetch handler. */
export default withOAuth(createApp());
