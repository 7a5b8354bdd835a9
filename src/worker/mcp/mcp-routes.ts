/**
 * `/mcp` (DESIGN.md Part 3, "Prompts as MCP tools") and `GET /mcp/tools`. A request from
 * elsewhere is refused first (origin-check.ts), then the caller authenticated. 2026-07-28
 * requests are stateless, each served by a fresh server (the SDK's createMcpHandler);
 * 2025-era requests (an `initialize`, and whatever carries its session id) are served by
 * the session's Durable Object (mcp-session.ts).
 */
import { Hono } from 'hono';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import type { Env } from '../env.ts';
import { requireScope } from '../http/auth.ts';
import { callerOf, type Principal } from './mcp-caller.ts';
import { mcpServer } from './mcp-server.ts';
import { mcpSessions, sessionNotFound, sessionObject } from './mcp-session.ts';
import { refusedOrigin } from './origin-check.ts';
import { servedTools } from './served-tools.ts';

/** The MCP routes. */
export const mcpRoutes = new Hono<{ Bindings: Env }>();

// The deployment's configuration, as GET /packs and GET /triggers: admin (the root has it).
mcpRoutes.get('/mcp/tools', requireScope('admin'), async (c) => {
  const { served, leftOut } = await servedTools(c.env.RUNVIL_KV);
  return c.json({
    served: served.map(({ name, prompt, description }) => ({ name, prompt, description })),
    left_out: leftOut,
  });
});

mcpRoutes.all('/mcp', async (c) => {
  const request = c.req.raw;
  const refused = refusedOrigin(request, c.env);
  if (refused) return refused;
  const principal = await callerOf(request, c.env);
  if (await isLegacyRequest(request)) return legacySession(c.env, request, principal);
  const handler = createMcpHandler(() => mcpServer(c.env, principal), { legacy: 'reject' });
  return handler.fetch(request);
});

/** A 2025-era request: to its session's object, or, for an `initialize`, to a new one. */
async function legacySession(env: Env, request: Request, principal: Principal): Promise<Response> {
  const sessionId = request.headers.get('mcp-session-id');
  if (sessionId !== null) {
    const session = sessionObject(env, sessionId);
    return session ? session.serve(forwarded(request), principal, false) : sessionNotFound();
  }
  if (request.method !== 'POST' || !(await isInitialize(request))) {
    return Response.json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' }, id: null }, { status: 400 });
  }
  const sessions = mcpSessions(env);
  return sessions.get(sessions.newUniqueId()).serve(forwarded(request), principal, true);
}

/** The request as the session object gets it over RPC, which carries no AbortSignal. */
function forwarded(request: Request): Request {
  const body = request.method === 'GET' || request.method === 'HEAD' ? null : request.body;
  return new Request(request.url, { method: request.method, headers: request.headers, body });
}

async function isInitialize(request: Request): Promise<boolean> {
  try {
    const body: unknown = await request.clone().json();
    return body !== null && typeof body === 'object' && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';
  } catch {
    return false;
  }
}
