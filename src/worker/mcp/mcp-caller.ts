/**
 * Who calls `/mcp`, and what they may do: a principal of the deployment's keys (the root,
 * a key with scopes, an OAuth client with scopes: http/auth.ts authenticates them). A tool
 * call needs `runs:start:<prompt>` (tools/list lists only those tools), a run's files
 * `runs:read`; a method without its scope is a JSON-RPC error naming the scope.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Env } from '../env.ts';
import { authenticate, type Principal } from '../http/auth.ts';
import { allows } from '../keys/scopes.ts';

export type { Principal };

/** The principal of a request to `/mcp`; an ApiError (401, 429) without one. */
export const callerOf = (request: Request, env: Env): Promise<Principal> => authenticate(request, env);

/** True when `principal` may do what `scope` names. */
export const holds = (principal: Principal, scope: string): boolean => allows(principal, scope);

/** The scope that runs `prompt`. */
export const startScope = (prompt: string): string => `runs:start:${prompt}`;

/** The scope that reads runs, their events and files. */
export const READ_SCOPE = 'runs:read';

/** A stable name of the principal, which request states and sessions are bound to. */
export function principalId(principal: Principal): string {
  switch (principal.kind) {
    case 'root':
      return 'root';
    case 'key':
      return `key:${principal.id}`;
    case 'oauth':
      return `oauth:${principal.clientId}`;
  }
}

/** The JSON-RPC error code of a method the caller's key has no scope for. */
export const FORBIDDEN = -32003;

/** The error of an MCP method the caller may not use: it names the scope it needs. */
export function forbidden(scope: string): ProtocolError {
  return new ProtocolError(FORBIDDEN, `forbidden: this key lacks the scope ${scope}`, { scope });
}
