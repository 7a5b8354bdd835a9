/**
 * What a person may grant an OAuth client on the consent page: scopes of Runvil's grammar
 * (keys/scopes.ts), each one the key they signed in with may use itself, so that a token
 * never does more than the key behind it. The root may grant any; an `admin` key anything
 * but what only the root does, which no scope names.
 */
import type { OfferedScope } from '../console/consent-page.tsx';
import type { Principal } from '../http/auth.ts';
import { allows, isScope, SCOPE_GRAMMAR } from '../keys/scopes.ts';
import { ADVERTISED_SCOPES } from './oauth-provider.ts';

/** The scopes granted and who granted them (`root` or the key's id), or why not. */
export type Granted = { ok: true; grantedBy: string; scopes: readonly string[] } | { ok: false; status: 400 | 403; message: string };

/** The boxes ticked when the client asked for no scope of Runvil's: what an MCP host needs to call prompts and answer their asks. */
const TICKED_BY_DEFAULT: readonly string[] = ['runs:read', 'runs:start:*', 'asks:answer:*'];

/** Whether `principal` may grant `ticked` (the scopes the person ticked or typed). */
export function grantableScopes(principal: Principal, ticked: readonly string[]): Granted {
  const scopes = [...new Set(ticked)];
  if (principal.kind === 'oauth') return { ok: false, status: 403, message: 'An access token cannot grant access: sign in with a Runvil key.' };
  if (scopes.length === 0) return { ok: false, status: 400, message: 'Tick at least one scope to grant.' };
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) return { ok: false, status: 400, message: `${unknown.join(', ')}: not a scope of Runvil. Scopes are ${SCOPE_GRAMMAR}.` };
  const lacking = scopes.filter((scope) => !allows(principal, scope));
  if (lacking.length > 0) {
    const who = principal.kind === 'key' ? `The key "${principal.name}"` : 'This key';
    return {
      ok: false,
      status: 403,
      message: `${who} does not have ${lacking.join(', ')}, so it cannot grant ${lacking.length === 1 ? 'it' : 'them'}: untick ${lacking.length === 1 ? 'it' : 'them'}, or sign in with a key that has ${lacking.length === 1 ? 'it' : 'them'}.`,
    };
  }
  return { ok: true, grantedBy: principal.kind === 'root' ? 'root' : principal.id, scopes };
}

/**
 * The scopes the page offers: the advertised ones, and the prompt scopes the client asked
 * for or the person typed; ticked as the person left them, else as the client asked, else
 * the default. `foreign` is what the client asked for that is not a scope of Runvil, but
 * for `offline_access`: a refresh token comes with every grant, so there is nothing to refuse.
 */
export function offeredScopes(requested: readonly string[], ticked?: readonly string[]): { offered: OfferedScope[]; foreign: string[] } {
  const ours = requested.filter(isScope);
  const tickedNow = ticked ?? (ours.length > 0 ? ours : TICKED_BY_DEFAULT);
  const all = [...new Set([...ADVERTISED_SCOPES, ...ours, ...tickedNow.filter(isScope)])];
  return {
    offered: all.map((scope) => ({ scope, checked: tickedNow.includes(scope) })),
    foreign: [...new Set(requested.filter((scope) => !isScope(scope) && scope !== 'offline_access'))],
  };
}
