/**
 * The Worker entry: Runvil's Hono app on Cloudflare Workers, and the run Durable Object.
 *
 * './lua-factory.ts' comes first: it must run before anything that imports wasmoon (see
 * wasmoon-env.ts for why the order matters).
 */
import './lua-factory.ts';
import { createApp } from './app.ts';

export { RunObject } from './run-object.ts';

/** The Worker's fetch handler. */
export default createApp();
