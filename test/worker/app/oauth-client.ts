/**
 * An MCP host's side of OAuth 2.1, by hand with fetch, against the test Worker wrapped as
 * the deployed Worker is (src/worker/oauth/oauth-worker.ts): dynamic registration, PKCE,
 * the consent page as a browser fills it in (its handle, its binding cookie), the code's
 * exchange and refresh. `mcpProbe` stands where /mcp's handler is and answers who
 * `authenticate` says the request speaks for.
 */
import app from './test-worker.ts';
import { testEnv } from './client.ts';
import { authenticate } from '../../../src/worker/http/auth.ts';
import { ApiError } from '../../../src/worker/http/http-error.ts';
import { withOAuth, type App } from '../../../src/worker/oauth/oauth-worker.ts';

/** The deployment's public origin in the workerd tests (RUNVIL_ORIGIN, vitest.workers.config.ts). */
export const ORIGIN = 'https://runvil.test';

/** Where the tests' clients ask to be sent back (a loopback app, as MCP hosts on a laptop do). */
export const REDIRECT_URI = 'http://127.0.0.1:33418/oauth/callback';

/** The app, but `/mcp` answers with the principal `authenticate` gives its request (200), or its refusal. */
export const mcpProbe: App = {
  async fetch(request, env, ctx) {
    if (!new URL(request.url).pathname.startsWith('/mcp')) return app.fetch(request, env, ctx as never);
    try {
      return Response.json({ principal: await authenticate(request, env) });
    } catch (error) {
      if (error instanceof ApiError) return Response.json({ error: error.message }, { status: error.status });
      throw error;
    }
  },
};

/** The Worker as deployed, over the probe. */
export const worker = withOAuth(mcpProbe);

/** The Worker as deployed (src/worker/index.ts), over the test app and its real /mcp. */
export const deployed = withOAuth(app as unknown as App);

/** A fetch into the deployed Worker, for clients that take one (the SDK's transports). */
export const deployedFetch = (url: string | URL, init?: RequestInit): Promise<Response> => deployed.fetch(new Request(url, init), testEnv);

/** A request to the Worker at the public origin. */
export function send(path: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(new Request(`${ORIGIN}${path}`, { redirect: 'manual', ...init }), testEnv);
}

/** A registered client. */
export interface Client {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
}

/** Registers a public client (as MCP hosts do) with `redirectUris`. */
export async function register(redirectUris: string[] = [REDIRECT_URI], extra: Record<string, unknown> = {}): Promise<Client> {
  const response = await send('/oauth/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test MCP host',
      redirect_uris: redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...extra,
    }),
  });
  if (response.status !== 201) throw new Error(`registration answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Client;
}

/** A PKCE pair: the verifier the client keeps and its S256 challenge. */
export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

/** The authorization request's path for `client`, with PKCE S256 unless `params` says otherwise. */
export function authorizePath(client: Client, challenge: string, params: Record<string, string> = {}): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0]!,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'state-1',
    resource: `${ORIGIN}/mcp`,
    ...params,
  });
  return `/oauth/authorize?${query}`;
}

/** The consent page as a browser holds it: its HTML, the form's handle and the cookie binding it. */
export interface Consent {
  path: string;
  status: number;
  html: string;
  handle: string;
  cookie: string;
}

/** Opens the consent page at `path` (an authorization request). */
export async function openConsent(path: string): Promise<Consent> {
  const response = await send(path);
  const html = await response.text();
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { path, status: response.status, html, handle, cookie };
}

/** Posts the consent form as a browser would: the fields, the page's cookie. */
export async function postConsent(
  consent: Consent,
  fields: { key?: string; scope?: string[]; more?: string; decision?: string; handle?: string },
  cookie = consent.cookie,
): Promise<Response> {
  const form = new URLSearchParams();
  form.set('handle', fields.handle ?? consent.handle);
  if (fields.key !== undefined) form.set('key', fields.key);
  for (const scope of fields.scope ?? []) form.append('scope', scope);
  if (fields.more !== undefined) form.set('more', fields.more);
  form.set('decision', fields.decision ?? 'approve');
  return send(consent.path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: form.toString() });
}

/** The code a consent's redirect carries, or null (with the redirect's URL for the failure message). */
export function codeOf(response: Response): string | null {
  const location = response.headers.get('location');
  return location === null ? null : new URL(location).searchParams.get('code');
}

/** A token request (the token endpoint's form). */
export function tokenRequest(fields: Record<string, string>): Promise<Response> {
  return send('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** The token endpoint's answer. */
export interface Tokens {
  access_token: string;
  refresh_token?: string;
  scope?: string;
  token_type: string;
  expires_in: number;
}

/** Exchanges `code` for tokens. */
export function exchange(client: Client, code: string, verifier: string, redirectUri = client.redirect_uris[0]!): Promise<Response> {
  return tokenRequest({
    grant_type: 'authorization_code',
    client_id: client.client_id,
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    resource: `${ORIGIN}/mcp`,
  });
}

/** The whole flow for `client`: consent with `key` granting `scopes`, and the code's exchange. */
export async function authorize(client: Client, key: string, scopes: string[]): Promise<Tokens> {
  const { verifier, challenge } = await pkce();
  const consent = await openConsent(authorizePath(client, challenge, { scope: scopes.join(' ') }));
  const decided = await postConsent(consent, { key, scope: scopes });
  const code = codeOf(decided);
  if (code === null) throw new Error(`the consent answered ${decided.status} without a code: ${await decided.text()}`);
  const response = await exchange(client, code, verifier);
  if (response.status !== 200) throw new Error(`the exchange answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Tokens;
}

/** A request to /mcp with `token`. */
export function callMcp(token: string, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }): Promise<Response> {
  return send('/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
