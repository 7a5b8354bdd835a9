/**
 * The Hono app: the HTTP API of DESIGN.md ("The HTTP API"). Every error is JSON.
 */
import { Hono } from 'hono';
import type { Env } from './env.ts';
import { ApiError, errorResponse } from './http/http-error.ts';
import { hookRoutes } from './routes/hooks.ts';
import { keyRoutes } from './keys/key-routes.ts';
import { packRoutes } from './routes/packs.ts';
import { listRoutes } from './routes/lists.ts';
import { promptRoutes } from './routes/prompts.ts';
import { replayRoutes } from './routes/replays.ts';
import { runRoutes } from './routes/runs.ts';
import { toolResultRoutes } from './routes/tool-results.ts';
import { triggerRoutes } from './routes/triggers.ts';
import { checkPathEncoding } from './http/request-path.ts';
import { consoleRoutes } from './console/routes.tsx';
import { noSniff } from './http/nosniff.ts';
import { mcpRoutes } from './mcp/mcp-routes.ts';

/** Builds the app. */
export function createApp(): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  app.use('*', noSniff);
  // Hono's onError sees Error instances only; a library that throws anything else ends here.
  app.use('*', async (c, next) => {
    try {
      await next();
    } catch (error) {
      c.res = errorResponse(error, c.req.raw);
    }
  });
  app.use('*', checkPathEncoding);
  app.get('/health', (c) => c.json({ ok: true }));
  // Each route names the scope it needs (docs/api.md, "Keys and scopes").
  app.route('/', keyRoutes);
  app.route('/', promptRoutes);
  app.route('/', packRoutes);
  app.route('/', listRoutes);
  app.route('/', runRoutes);
  app.route('/', toolResultRoutes);
  app.route('/', replayRoutes);
  app.route('/', hookRoutes);
  app.route('/', triggerRoutes);
  app.route('/', mcpRoutes);
  app.route('/', consoleRoutes);
  app.notFound((c) => {
    const path = c.req.path.length > 200 ? `${c.req.path.slice(0, 200)}...` : c.req.path;
    throw new ApiError(404, `no route ${c.req.method} ${path}`);
  });
  app.onError((error, c) => errorResponse(error, c.req.raw));
  return app;
}
