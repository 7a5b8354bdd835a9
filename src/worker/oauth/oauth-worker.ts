/**
 * The Worker's fetch with OAuth around the app: the provider answers its own endpoints (the
 * metadata of RFC 8414 and RFC 9728, registration, tokens) and the consent page, and checks
 * the access tokens it issued on `/mcp`; everything else reaches the app exactly as before.
 *
 * Only a token of the provider's shape (`user:grant:secret`) on `/mcp` goes through the
 * provider, which vouches for its grant (http/oauth-grant.ts) and hands the request on to
 * the app; a Runvil key, or no credential, goes to the app directly, so keys work on `/mcp`
 * as they do everywhere (the provider never sees them). A refusal of `/mcp` there carries
 * the OAuth challenge, so that an MCP host finds the authorization server (MCP
 * authorization, "Protected Resource Metadata Discovery").
 *
 * The provider serves the public origin only: a request that names another host is the
 * app's, as every request is in a deployment without a public origin.
 */
import { sameSecret } from '../http/constant-time.ts';
import { bearerToken } from '../http/auth.ts';
import { vouchForGrant } from '../http/oauth-grant.ts';
import type { Env } from '../env.ts';
import { consentPage } from './consent.ts';
import { granterStands } from './grant-granter.ts';
import { OAUTH_PATHS, oauthServerFor, type OAuthHandlers, type OAuthServer, type WorkerContext } from './oauth-provider.ts';

/** The app as the Worker calls it (Hono's fetch). */
export interface App {
  fetch(request: Request, env: Env, ctx?: WorkerContext): Response | Promise<Response>;
}

/** The Worker's fetch handler: the app with OAuth on `/mcp`. */
export interface OAuthWorker {
  fetch(request: Request, env: Env, ctx?: WorkerContext): Promise<Response>;
}

/** The execution context the provider is handed: its own object per request, keeping the platform's. */
interface ProviderContext extends WorkerContext {
  platform: WorkerContext | undefined;
  auth?: { clientId?: string; scope?: readonly string[] };
}

/** Wraps `app` (the Hono app) with the OAuth provider. */
export function withOAuth(app: App): OAuthWorker {
  const handlers: OAuthHandlers = {
    api: {
      async fetch(request, env, ctx) {
        const { auth, platform, props } = ctx as ProviderContext;
        if (auth?.clientId === undefined) throw new Error('the OAuth provider handed on a request without a checked token');
        if (!(await granterStands(env, props))) return revoked(oauthServer(env));
        vouchForGrant(request, { clientId: auth.clientId, scopes: auth.scope ?? [] });
        return app.fetch(request, env, platform);
      },
    },
    consent: {
      async fetch(request, env, ctx) {
        const url = new URL(request.url);
        if (url.pathname !== OAUTH_PATHS.authorize) return app.fetch(request, env, (ctx as ProviderContext).platform);
        return consentPage(request, env);
      },
    },
  };
  const made = new Map<string, OAuthServer | null>();
  const oauthServer = (env: Env) => oauthServerFor(env, handlers, made);

  return {
    async fetch(request, env, ctx) {
      const server = oauthServer(env);
      const url = new URL(request.url);
      if (server === null || url.origin !== server.origin) return app.fetch(request, env, ctx);
      if (isOAuthPath(url.pathname)) return server.provider.fetch(request, env, providerContext(ctx) as never);
      if (!isMcpPath(url.pathname)) return app.fetch(request, env, ctx);
      if (carriesIssuedToken(request, env)) return server.provider.fetch(request, env, providerContext(ctx) as never);
      return withChallenge(await app.fetch(request, env, ctx), server);
    },
  };
}

/** The provider's own paths: its metadata, registration, tokens, and the consent page it routes to us. */
function isOAuthPath(path: string): boolean {
  return (
    path === '/.well-known/oauth-authorization-server' ||
    path === '/.well-known/oauth-protected-resource' ||
    path.startsWith('/.well-known/oauth-protected-resource/') ||
    path === OAUTH_PATHS.authorize ||
    path === OAUTH_PATHS.token ||
    path === OAUTH_PATHS.register
  );
}

const isMcpPath = (path: string): boolean => path === OAUTH_PATHS.resource || path.startsWith(`${OAUTH_PATHS.resource}/`);

/**
 * Whether the request's bearer token has the shape of one the provider issued
 * (`user:grant:secret`). The root token may have any shape, so it is told apart first.
 */
function carriesIssuedToken(request: Request, env: Env): boolean {
  const token = bearerToken(request);
  if (token === null || token.split(':').length !== 3) return false;
  const root = env.RUNVIL_API_TOKEN;
  return !(typeof root === 'string' && root !== '' && sameSecret(token, root));
}

/** A 401 of `/mcp` with the Bearer challenge naming the resource's metadata, unless it names one already. */
function withChallenge(response: Response, server: OAuthServer): Response {
  if (response.status !== 401 || response.headers.has('www-authenticate')) return response;
  const challenged = new Response(response.body, response);
  challenged.headers.set('www-authenticate', `Bearer realm="OAuth", resource_metadata="${server.resourceMetadataUrl}"`);
  return challenged;
}

/** The refusal of a token whose granter no longer stands, as the provider refuses a token it does not know. */
function revoked(server: OAuthServer | null): Response {
  const description = 'the key that granted this access was revoked';
  const metadata = server === null ? '' : `, resource_metadata="${server.resourceMetadataUrl}"`;
  return Response.json(
    { error: 'invalid_token', error_description: description },
    {
      status: 401,
      headers: {
        'cache-control': 'no-store',
        'www-authenticate': `Bearer realm="OAuth"${metadata}, error="invalid_token", error_description="${description}"`,
      },
    },
  );
}

function providerContext(platform: WorkerContext | undefined): ProviderContext {
  return {
    platform,
    waitUntil: (promise) => (platform ? platform.waitUntil(promise) : undefined),
    passThroughOnException: () => platform?.passThroughOnException(),
    props: {},
  };
}
