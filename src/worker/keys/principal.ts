/**
 * Who a request speaks for: the deployment's root (RUNVIL_API_TOKEN), a key the root made
 * (keys/key-store.ts), or an OAuth client holding a token granted with some scopes.
 */

/** The authenticated caller of a request. */
export type Principal =
  { kind: 'root' } | { kind: 'key'; id: string; name: string; scopes: readonly string[] } | { kind: 'oauth'; clientId: string; scopes: readonly string[] };
