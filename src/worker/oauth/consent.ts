/**
 * The authorization endpoint, `/oauth/authorize`: the console's consent page
 * (console/consent-page.tsx). GET shows it for a request the provider accepts (a registered
 * client, its exact redirect URI, PKCE with S256); POST signs the person in with a Runvil
 * key and grants the scopes they ticked, each one the key itself may use, or declines.
 *
 * The form posts back to the same URL, so a post the person must fix (no key, a key that is
 * not the deployment's, a scope the key lacks) shows the page again with what to fix, on the
 * same handle: the handle is spent only by a grant or a refusal. The grant itself is made
 * from the request the provider stored when the page was shown, never from the URL posted.
 */
import { AuthorizationError, type AuthRequest, type ConsentDescription, type OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { JSX } from 'hono/jsx/jsx-runtime';
import { ConsentPage, ConsentProblemPage } from '../console/consent-page.tsx';
import { authenticate, type Principal } from '../http/auth.ts';
import { ApiError } from '../http/http-error.ts';
import type { Env } from '../env.ts';
import { grantProps } from './grant-granter.ts';
import { grantableScopes, offeredScopes } from './grantable-scopes.ts';

/** A form field's value when it was sent once as text, else null. */
const single = (form: FormData, name: string): string | null => {
  const values = form.getAll(name);
  return values.length === 1 && typeof values[0] === 'string' ? values[0] : null;
};

/** Answers `/oauth/authorize` (the provider hands it on with its helpers in `env.OAUTH_PROVIDER`). */
export async function consentPage(request: Request, env: Env): Promise<Response> {
  const oauth = env.OAUTH_PROVIDER as OAuthHelpers;
  let authRequest: AuthRequest;
  try {
    authRequest = await oauth.parseAuthRequest(request);
  } catch (error) {
    // A redirect back to the client is safe only once the provider has checked its redirect URI.
    if (error instanceof AuthorizationError && error.redirectTo !== undefined) return Response.redirect(error.redirectTo, 302);
    if (error instanceof AuthorizationError) return problemPage(400, error.description);
    throw error;
  }
  if (request.method === 'GET' || request.method === 'HEAD') {
    const described = await oauth.describeConsent(authRequest);
    const consent = await oauth.beginConsent(authRequest);
    return page(200, authRequest, render(described, consent.handle, authRequest, null), consent.headers);
  }
  if (request.method !== 'POST') return problemPage(405, 'the authorization page takes GET (to show it) and POST (its form) only');
  return decide(request, env, oauth, authRequest);
}

async function decide(request: Request, env: Env, oauth: OAuthHelpers, authRequest: AuthRequest): Promise<Response> {
  const form = await readForm(request);
  const handle = form === null ? null : single(form, 'handle');
  if (form === null || handle === null) return problemPage(400, 'the form was not sent whole: open the page again from the app');
  const again = async (status: number, problem: string, ticked: readonly string[]) =>
    page(status, authRequest, render(await oauth.describeConsent(authRequest), handle, authRequest, problem, ticked));
  try {
    if (single(form, 'decision') !== 'approve') {
      const denied = await oauth.denyConsent(request, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const ticked = [...form.getAll('scope'), ...(single(form, 'more') ?? '').split(/\s+/)].filter(
      (scope): scope is string => typeof scope === 'string' && scope !== '',
    );
    const key = single(form, 'key') ?? '';
    if (key === '') return again(401, 'Sign in with a Runvil key (the API token or a key of this deployment) to grant access.', ticked);
    const signedIn = await signIn(request, env, key);
    if (!signedIn.ok) return again(signedIn.status, signedIn.message, ticked);
    const granted = grantableScopes(signedIn.principal, ticked);
    if (!granted.ok) return again(granted.status, granted.message, ticked);
    const approved = await oauth.approveConsent(request, handle);
    const { redirectTo } = await oauth.completeAuthorization({
      request: approved.request,
      userId: granted.grantedBy,
      metadata: { grantedBy: granted.grantedBy },
      scope: [...granted.scopes],
      props: await grantProps(env, granted.grantedBy, granted.scopes),
    });
    approved.headers.set('location', redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (error) {
    // The handle is spent, expired, or bound to another browser.
    if (error instanceof AuthorizationError) return problemPage(400, error.description);
    throw error;
  }
}

/** The consent form's fields, or null for a body that is not one. */
async function readForm(request: Request): Promise<FormData | null> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type) && !/^multipart\/form-data\b/i.test(type)) return null;
  try {
    return await request.formData();
  } catch {
    return null;
  }
}

type SignIn = { ok: true; principal: Principal } | { ok: false; status: number; message: string };

/** The principal of `key`, as the API would take it in `Authorization`. */
async function signIn(request: Request, env: Env, key: string): Promise<SignIn> {
  if (/[\s]/.test(key)) return { ok: false, status: 401, message: 'That is not a Runvil key: a key has no spaces. Paste it again.' };
  const asBearer = new Request(request.url, { headers: { authorization: `Bearer ${key}` } });
  try {
    const principal = await authenticate(asBearer, env);
    // An OAuth token never signs in to grant another: it would pass on what it was granted to clients nobody approved.
    if (principal.kind === 'oauth') return { ok: false, status: 401, message: 'Sign in with a Runvil key, not an access token.' };
    return { ok: true, principal };
  } catch (error) {
    if (error instanceof ApiError && error.status === 429) return { ok: false, status: 429, message: `That key is past its rate limit: ${error.message}` };
    if (error instanceof ApiError && error.status === 401)
      return { ok: false, status: 401, message: 'That key is not one of this deployment, or it was revoked: check it and try again.' };
    throw error;
  }
}

/** The page's content for `authRequest`: the scopes offered, those ticked, and a problem to fix. */
function render(described: ConsentDescription, handle: string, authRequest: AuthRequest, problem: string | null, ticked?: readonly string[]): JSX.Element {
  const offers = offeredScopes(authRequest.scope, ticked);
  return ConsentPage({
    clientName: described.clientName,
    ...(described.clientDomain !== undefined ? { clientDomain: described.clientDomain } : {}),
    redirectHost: described.redirectHost,
    redirectIsLoopback: described.redirectIsLoopback,
    handle,
    offered: offers.offered,
    foreign: offers.foreign,
    problem,
  });
}

/**
 * An HTML page of the consent, with the console's headers: nothing inline, no framing, and a
 * form that may post here and be redirected to the client (browsers hold a form's redirect
 * to `form-action` too).
 */
async function page(status: number, authRequest: AuthRequest | null, content: JSX.Element, extra?: Headers): Promise<Response> {
  const headers = new Headers(extra);
  const redirectOrigin = authRequest === null ? 'null' : new URL(authRequest.redirectUri).origin;
  const formAction = redirectOrigin === 'null' ? "'self'" : `'self' ${redirectOrigin}`;
  headers.set('content-type', 'text/html; charset=utf-8');
  headers.set('content-security-policy', CONSENT_CSP.replace('FORM_ACTION', formAction));
  headers.set('x-frame-options', 'DENY');
  headers.set('referrer-policy', 'no-referrer');
  headers.set('cache-control', 'no-store');
  return new Response(`<!doctype html>${await content.toString()}`, { status, headers });
}

const CONSENT_CSP = ["default-src 'none'", "style-src 'self'", "img-src 'self'", "base-uri 'none'", 'form-action FORM_ACTION', "frame-ancestors 'none'"].join(
  '; ',
);

/** A page saying why the authorization cannot go on. */
const problemPage = (status: number, problem: string): Promise<Response> => page(status, null, ConsentProblemPage({ problem }));
