/**
 * The Hono app: the HTTP API of DESIGN.md ("The HTTP API"). Every error is JSON.
 */
import { Hono } from 'hono';
import { requireApiToken } from './auth.ts';
import type { Env } from './env.ts';
import { ApiError, errorResponse } from './http-error.ts';
import { hookRoutes } from './routes/hooks.ts';
import { promptRoutes } from './routes/prompts.ts';
import { runRoutes } from './routes/runs.ts';

/** Builds the app. */
export function createApp(): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  app.get('/health', (c) => c.json({ ok: true }));
  app.use('/prompts', requireApiToken);
  app.use('/prompts/*', requireApiToken);
  app.route('/', promptRoutes);
  app.route('/', runRoutes);
  app.route('/', hookRoutes);
  app.notFound((c) => {
    throw new ApiError(404, `no route ${c.req.method} ${c.req.path}`);
  });
  app.onError((error) => errorResponse(error));
  return app;
}
