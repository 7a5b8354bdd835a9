/**
 * `resources/subscribe` and `resources/unsubscribe` (the `resources.subscribe` capability),
 * for the callers of a 2025-11-25 session (mcp-session.ts), whose server lives as long as
 * the session and can send `notifications/resources/updated` on its standalone stream. A
 * subscription names a resource the caller may read: a run's file (`runs:read`, the run
 * must exist; the file may come later), or a resource runvil.yaml declares (its prompt's
 * `runs:start:<prompt>`); anything else is the protocol's resource-not-found. A run's files
 * are updated when the run ends (their content is then final): the session follows the
 * run's event stream and tells each subscribed file of it. A declared resource is made
 * afresh by each read, so nothing is ever stored that could change under it: its
 * subscription is kept and no update is sent. A stateless (2026-07-28) request has no
 * session to tell: its subscribe is refused, saying so.
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type Server } from '@modelcontextprotocol/server';
import type { Env } from '../env.ts';
import { runObject } from '../run-object/run-ids.ts';
import { isFinal } from '../run-object/run-view.ts';
import { forbidden, holds, READ_SCOPE, startScope, type Principal } from './mcp-caller.ts';
import { declaredResource, mayRead } from './prompt-resources.ts';
import { parseFileUri } from './run-resources.ts';

/** The most resources one session subscribes to at once. */
export const MAX_SUBSCRIPTIONS = 256;

/** Registers `resources/subscribe` and `resources/unsubscribe` on the server of one session (or of one stateless request, which refuses them). */
export function registerSubscriptions(server: Server, env: Env, principal: Principal): void {
  // The server lives as long as its session: so do these.
  const subscriptions = { uris: new Set<string>(), followed: new Set<string>() };

  server.setRequestHandler('resources/subscribe', async (request, ctx) => {
    if (ctx.sessionId === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        'resources/subscribe needs a session to send updates on: subscribe in a 2025-11-25 session (initialize first)',
      );
    }
    const uri = request.params.uri;
    if (subscriptions.uris.has(uri)) return {};
    const runId = await checkSubscribable(env, principal, uri);
    if (subscriptions.uris.size >= MAX_SUBSCRIPTIONS)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `this session holds ${MAX_SUBSCRIPTIONS} subscriptions, the most it may: unsubscribe from one first`,
      );
    subscriptions.uris.add(uri);
    if (runId !== null && !subscriptions.followed.has(runId)) {
      subscriptions.followed.add(runId);
      void tellWhenEnded(env, runId, async () => {
        subscriptions.followed.delete(runId);
        for (const subscribed of [...subscriptions.uris]) {
          if (parseFileUri(subscribed)?.runId === runId) await server.sendResourceUpdated({ uri: subscribed }).catch(() => {});
        }
      });
    }
    return {};
  });

  server.setRequestHandler('resources/unsubscribe', async (request) => {
    subscriptions.uris.delete(request.params.uri);
    return {};
  });
}

/** Checks that `principal` may subscribe to `uri`; the run it is a file of, or null for a declared resource. */
async function checkSubscribable(env: Env, principal: Principal, uri: string): Promise<string | null> {
  const file = parseFileUri(uri);
  if (file !== null) {
    if (!holds(principal, READ_SCOPE)) throw forbidden(READ_SCOPE);
    // An id that is no run object's of this deployment throws as the object is named.
    const view = await (async () => runObject(env, file.runId).view())().catch(() => null);
    if (view === null) throw new ResourceNotFoundError(uri);
    return isFinal(view.status) ? null : file.runId;
  }
  const declared = declaredResource(uri);
  if (declared === null) throw new ResourceNotFoundError(uri);
  if (!mayRead(principal, declared.resource)) throw forbidden(startScope(declared.resource.prompt));
  return null;
}

/** Calls `tell` once run `runId`'s event stream closes, which it does when the run ends. */
async function tellWhenEnded(env: Env, runId: string, tell: () => Promise<void>): Promise<void> {
  try {
    const response = await runObject(env, runId).fetch(new Request('https://run/events'));
    if (!response.body) return;
    const reader = response.body.getReader();
    for (;;) if ((await reader.read()).done) break;
    const view = await runObject(env, runId).view();
    if (view !== null && isFinal(view.status)) await tell();
  } catch {
    // A stream that breaks tells nothing: the caller can still read the files.
  }
}
