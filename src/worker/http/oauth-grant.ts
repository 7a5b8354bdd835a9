/**
 * The OAuth grant a request's access token carries, once the OAuth provider has checked the
 * token (src/worker/oauth/): its client and the scopes the person granted it. The provider
 * vouches for the very Request object it hands on, so nothing a client sends (a header, a
 * body) can claim a grant; `authenticate` (auth.ts) reads it back as an `oauth` principal.
 */

/** What a checked OAuth access token grants: the client that holds it and its scopes. */
export interface OAuthGrant {
  clientId: string;
  scopes: readonly string[];
}

const vouched = new WeakMap<Request, OAuthGrant>();

/** Records that `request` carries a token the provider checked, granting `grant`. */
export function vouchForGrant(request: Request, grant: OAuthGrant): void {
  vouched.set(request, { clientId: grant.clientId, scopes: Object.freeze([...grant.scopes]) });
}

/** The grant the provider vouched for on `request`, or null for any other request. */
export function grantOf(request: Request): OAuthGrant | null {
  return vouched.get(request) ?? null;
}
