/**
 * The Worker entry: Runvil's Hono app on Cloudflare Workers (a placeholder for now).
 *
 * When the Engine is wired in, import './lua-factory.ts' before anything that imports
 * wasmoon (see wasmoon-env.ts for why the order matters).
 */
import { Hono } from 'hono';

/** The Hono app served by the Worker. */
const app = new Hono();

app.get('/health', (c) => c.json({ ok: true }));

export default app;
