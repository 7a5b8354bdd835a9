/**
 * A 2025-11-25 MCP session, held in a Durable Object of its own (as Cloudflare's McpAgent
 * holds each session): its server and Streamable HTTP transport live in the object's
 * memory, so the server's `elicitation/create` on a call's stream and the caller's answer,
 * which arrives as another POST, meet in the same place. The session id is the object's
 * id; the Worker routes every request that carries it here (mcp-routes.ts). The session
 * belongs to the principal that opened it: another's requests find no session. An object
 * that was evicted has lost its session (its memory), and answers 404 as the transport
 * does for an unknown session, which tells the client to initialize again; the runs it
 * started live on in their own objects.
 */
import { DurableObject } from 'cloudflare:workers';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { Env } from '../env.ts';
import type { DoId, DoNamespace } from '../platform-types.ts';
import { principalId, type Principal } from './mcp-caller.ts';
import { mcpServer } from './mcp-server.ts';

/** What the Worker asks of a session object. */
export interface McpSessionApi {
  /** Serves one HTTP request of the session for `principal` (the Worker has authenticated it). */
  serve(request: Request, principal: Principal, initialize: boolean): Promise<Response>;
}

/** The session objects' namespace (wrangler.toml's MCP_SESSIONS binding). */
export function mcpSessions(env: Env): DoNamespace<McpSessionApi> {
  return env.MCP_SESSIONS as DoNamespace<McpSessionApi>;
}

/** The object of session `sessionId`, or null when no session could have that id. */
export function sessionObject(env: Env, sessionId: string): McpSessionApi | null {
  if (!/^[0-9a-f]{64}$/.test(sessionId)) return null;
  let id: DoId;
  try {
    id = mcpSessions(env).idFromString(sessionId);
  } catch {
    return null;
  }
  return mcpSessions(env).get(id);
}

/** The transport's answer to a request for a session it does not have. */
export function sessionNotFound(): Response {
  return Response.json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }, { status: 404 });
}

/** One MCP session. */
export class McpSession extends DurableObject<Env> implements McpSessionApi {
  private transport: WebStandardStreamableHTTPServerTransport | null = null;
  private owner: string | null = null;

  async serve(request: Request, principal: Principal, initialize: boolean): Promise<Response> {
    if (this.transport === null) {
      if (!initialize) return sessionNotFound();
      this.owner = principalId(principal);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => this.ctx.id.toString(),
        onsessionclosed: () => {
          this.transport = null;
          this.owner = null;
        },
      });
      await (await mcpServer(this.env, principal)).connect(transport);
      this.transport = transport;
    } else if (this.owner !== principalId(principal)) {
      return sessionNotFound();
    }
    return this.transport.handleRequest(request);
  }
}
