/**
 * OAuth 2.1 for `/mcp` (DESIGN.md Part 3, "Prompts as MCP tools", Auth): Cloudflare's
 * workers-oauth-provider as the deployment's authorization server and `/mcp` as its one
 * protected resource, with dynamic client registration, PKCE (S256 only) and refresh tokens.
 * The consent page is the console's (consent.ts); the tokens carry the scopes the person
 * granted there.
 *
 * The provider binds every token to one canonical resource, `<public origin>/mcp`, so it is
 * made for the deployment's public origin (runvil.yaml's `public_url`, else RUNVIL_ORIGIN:
 * public-origin.ts), never for a request's Host. A deployment without one has no OAuth:
 * `/mcp` takes keys only.
 */
import { getOAuthApi, OAuthError, OAuthProvider, type OAuthHelpers, type OAuthProviderOptions } from '@cloudflare/workers-oauth-provider';
import { publicOrigin } from '../deployment/public-origin.ts';
import type { Env } from '../env.ts';
import { granterStands } from './grant-granter.ts';

/** Where the provider's endpoints live, below the public origin. */
export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  resource: '/mcp',
} as const;

/** The scopes the authorization server advertises (its catalogue; a prompt's own scopes may be granted too). */
export const ADVERTISED_SCOPES = ['runs:read', 'runs:start:*', 'asks:answer:*', 'prompts:write', 'admin'];

/** How long an access token lasts; a client refreshes it with its refresh token (30 days, the provider's default). */
const ACCESS_TOKEN_SECONDS = 3600;

/** A request's handler as the provider calls it: a Worker's fetch. */
export interface FetchHandler {
  fetch(request: Request, env: Env, ctx: WorkerContext): Promise<Response>;
}

/** The part of a Worker's execution context the provider and the app use. */
export interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
  props?: unknown;
}

/** The deployment's authorization server: the provider and the origin it serves. */
export interface OAuthServer {
  origin: string;
  provider: OAuthProvider<Env>;
  /** Where `/mcp`'s protected-resource metadata (RFC 9728) is served. */
  resourceMetadataUrl: string;
}

/** What the provider hands requests to: `/mcp` with a token it checked, and the consent page. */
export interface OAuthHandlers {
  api: FetchHandler;
  consent: FetchHandler;
}

/** The provider's options for the deployment served at `origin`. */
export function providerOptions(origin: string, handlers: OAuthHandlers): OAuthProviderOptions<Env> {
  return {
    apiRoute: `${origin}${OAUTH_PATHS.resource}`,
    apiHandler: handlers.api as OAuthProviderOptions<Env>['apiHandler'],
    defaultHandler: handlers.consent as OAuthProviderOptions<Env>['defaultHandler'],
    authorizeEndpoint: `${origin}${OAUTH_PATHS.authorize}`,
    tokenEndpoint: `${origin}${OAUTH_PATHS.token}`,
    clientRegistrationEndpoint: `${origin}${OAUTH_PATHS.register}`,
    scopesSupported: ADVERTISED_SCOPES,
    accessTokenTTL: ACCESS_TOKEN_SECONDS,
    resourceMetadata: { resource: `${origin}${OAUTH_PATHS.resource}`, authorization_servers: [origin], resource_name: 'Runvil prompts over MCP' },
    // A code's exchange and a refresh end the grant once the key that granted it is revoked.
    tokenExchangeCallback: async ({ env, props }) => {
      if (!(await granterStands(env, props)))
        throw new OAuthError('invalid_grant', { description: 'the key that granted this access was revoked: authorize again' });
    },
    // No requiredScopes: the person picks the scopes on the consent page, not the client.
    // The provider's errors are answers to clients (a wrong verifier, a reused code), not the server's faults.
    onError: () => undefined,
  };
}

/**
 * The authorization server for `env`'s public origin, made once per origin, or null when
 * the deployment has no public origin or one the provider refuses (http on a host that is
 * not loopback): then `/mcp` takes keys only.
 */
export function oauthServerFor(env: Env, handlers: OAuthHandlers, made: Map<string, OAuthServer | null>): OAuthServer | null {
  const origin = canonicalOrigin(env);
  if (origin === null) return null;
  if (made.has(origin)) return made.get(origin)!;
  let server: OAuthServer | null = null;
  try {
    const options = providerOptions(origin, handlers);
    server = {
      origin,
      provider: new OAuthProvider<Env>(options),
      resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource${OAUTH_PATHS.resource}`,
    };
  } catch (error) {
    console.warn(
      `OAuth for /mcp is off: the provider refuses the public origin ${origin} (${error instanceof Error ? error.message : String(error)}); it needs https, or http on a loopback host`,
    );
  }
  made.set(origin, server);
  return server;
}

const NO_HANDLERS: OAuthHandlers = {
  api: { fetch: async () => new Response(null, { status: 404 }) },
  consent: { fetch: async () => new Response(null, { status: 404 }) },
};

/** The provider's helpers (its clients, grants and tokens) for `env`'s deployment, or null without OAuth. */
export function oauthHelpers(env: Env): OAuthHelpers | null {
  const origin = canonicalOrigin(env);
  return origin === null ? null : getOAuthApi(providerOptions(origin, NO_HANDLERS), env);
}

/** The public origin as a URL spells it (a host in lower case, no default port), as requests and the provider compare it; null without one. */
function canonicalOrigin(env: Env): string | null {
  const origin = publicOrigin(env);
  return origin.ok ? new URL(origin.origin).origin : null;
}
