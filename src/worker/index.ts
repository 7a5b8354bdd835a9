/**
 * The Worker entry: Runvil's Hono app on Cloudflare Workers, and the run Durable Object.
 */
import './workerd-lua/lua-factory.ts'; // first: workerd-lua/README.md, "It loads first"
import { createApp } from './app.ts';

export { RunObject } from './run-object/run-object.ts';

/** The Worker's fetch handler. */
export default createApp();
