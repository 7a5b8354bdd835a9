/**
 * `/mcp`'s resources: runs' files, `runvil://runs/<run id>/files/<path>` (scope `runs:read`),
 * and the resources runvil.yaml's `mcp.resources` declares, served by prompts
 * (prompt-resources.ts; each with its prompt's `runs:start:<prompt>`). `resources/list`
 * gives the declared fixed resources, then the files of the newest runs, a page of runs at a
 * time (the run index, as `GET /runs` reads it); `resources/read` of a run file reads its
 * text from the run object while it holds the run, else from the run's record in KV (as
 * `GET /runs/:id/files/*`).
 */
import { ResourceNotFoundError, type Server } from '@modelcontextprotocol/server';
import type { Env } from '../env.ts';
import { decodeCursor, encodeCursor } from '../http/list-query.ts';
import { runsPage } from '../outbox/run-index.ts';
import { KvRunStore } from '../outbox/run-store-kv.ts';
import { runObject } from '../run-object/run-ids.ts';
import { forbidden, holds, READ_SCOPE, type Principal } from './mcp-caller.ts';
import { declaredResource, listedResources, listedTemplates, readDeclared, readsDeclared } from './prompt-resources.ts';

/** Runs whose files one `resources/list` page lists. */
export const RUNS_PER_PAGE = 10;

const PREFIX = 'runvil://runs/';
/** A run id is 64 hex digits (a Durable Object id). */
const RESOURCE_URI = /^runvil:\/\/runs\/([0-9a-f]{64})\/files\/(.+)$/;

/** The resource URI of file `path` of run `runId` (each path segment percent-encoded). */
export const fileUri = (runId: string, path: string): string => `${PREFIX}${runId}/files/${path.split('/').map(encodeURIComponent).join('/')}`;

/** The run and the file a run file's URI names, or null for any other URI. */
export function parseFileUri(uri: string): { runId: string; path: string } | null {
  const match = RESOURCE_URI.exec(uri);
  if (!match) return null;
  try {
    return { runId: match[1]!, path: match[2]!.split('/').map(decodeURIComponent).join('/') };
  } catch {
    return null;
  }
}

/** Registers `resources/list`, `resources/templates/list` and `resources/read` on `server`. */
export function registerRunResources(server: Server, env: Env, principal: Principal): void {
  const checkScope = () => {
    if (!holds(principal, READ_SCOPE)) throw forbidden(READ_SCOPE);
  };

  server.setRequestHandler('resources/list', async (request) => {
    const declared = request.params?.cursor === undefined ? listedResources(principal) : [];
    // A key that may read no run's files still lists the declared resources its prompts serve.
    if (!holds(principal, READ_SCOPE)) {
      if (readsDeclared(principal)) return { resources: declared };
      throw forbidden(READ_SCOPE);
    }
    const after = decodeCursor('mcp-runs', request.params?.cursor, 2);
    const rows = await runsPage(env.RUNVIL_DB, {
      prompt: null,
      status: null,
      limit: RUNS_PER_PAGE + 1,
      after: after && { created_at: after[0]!, run_id: after[1]! },
    });
    const page = rows.slice(0, RUNS_PER_PAGE);
    const resources: { uri: string; name: string; mimeType: string; description?: string }[] = [...declared];
    for (const row of page) {
      const files = (await runObject(env, row.run_id).files('')) ?? (await new KvRunStore(env.RUNVIL_KV, row.run_id).list(''));
      for (const path of files)
        resources.push({ uri: fileUri(row.run_id, path), name: `${row.prompt} ${row.run_id.slice(0, 8)} ${path}`, mimeType: 'text/plain' });
    }
    const last = page.at(-1);
    return { resources, ...(rows.length > RUNS_PER_PAGE && last ? { nextCursor: encodeCursor('mcp-runs', [last.created_at, last.run_id]) } : {}) };
  });

  server.setRequestHandler('resources/templates/list', async () => {
    const declared = listedTemplates(principal);
    if (!holds(principal, READ_SCOPE)) {
      if (readsDeclared(principal)) return { resourceTemplates: declared };
      throw forbidden(READ_SCOPE);
    }
    return {
      resourceTemplates: [
        ...declared,
        { uriTemplate: `${PREFIX}{run_id}/files/{+path}`, name: 'run file', description: 'A file a run wrote (store.write)', mimeType: 'text/plain' },
      ],
    };
  });

  server.setRequestHandler('resources/read', async (request) => {
    const uri = request.params.uri;
    const declared = declaredResource(uri);
    if (declared !== null) return { contents: [await readDeclared(env, principal, uri, declared)] };
    checkScope();
    const file = parseFileUri(uri);
    if (!file) throw new ResourceNotFoundError(uri);
    const { runId, path } = file;
    let text: string | null | undefined;
    try {
      text = await runObject(env, runId).file(path);
    } catch {
      // An id of no run object of this deployment.
      throw new ResourceNotFoundError(uri);
    }
    if (text === undefined) text = await new KvRunStore(env.RUNVIL_KV, runId).read(path);
    if (text === null || text === undefined) throw new ResourceNotFoundError(uri);
    return { contents: [{ uri, mimeType: 'text/plain', text }] };
  });
}
