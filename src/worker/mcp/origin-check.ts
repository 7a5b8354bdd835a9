/**
 * DNS rebinding protection for `/mcp` (the Streamable HTTP transport's security warning):
 * a browser on another site must not reach the deployment through a name that resolves to
 * it. A request's `Host` must be one the deployment serves on (its public origin, or a
 * loopback name) once the deployment knows its origin (runvil.yaml's public_url, or
 * RUNVIL_ORIGIN, which `npm start` sets); an `Origin`, which browsers send, must name one
 * too (else, without a known origin, the request's own host). Anything else is 403 with a
 * JSON-RPC error, before authentication and before any server is built.
 */
import { validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import type { Env } from '../env.ts';
import { publicOrigin } from '../deployment/public-origin.ts';

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** The 403 response of a request from elsewhere, or null when it may proceed. */
export function refusedOrigin(request: Request, env: Env): Response | null {
  const origin = publicOrigin(env);
  const requestHost = new URL(request.url).hostname;
  const allowed = origin.ok ? [...LOOPBACK, new URL(origin.origin).hostname] : [requestHost];
  if (origin.ok) {
    const host = validateHostHeader(request.headers.get('host') ?? new URL(request.url).host, allowed);
    if (!host.ok) return refusal(`the Host ${JSON.stringify(host.hostHeader ?? '')} is not one this deployment serves on`);
  }
  const originHeader = request.headers.get('origin');
  if (originHeader !== null && !validateOriginHeader(originHeader, allowed).ok)
    return refusal(`requests from the origin ${JSON.stringify(originHeader.slice(0, 200))} are refused (DNS rebinding protection)`);
  return null;
}

function refusal(message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code: -32000, message: `Forbidden: ${message}` }, id: null }, { status: 403 });
}
