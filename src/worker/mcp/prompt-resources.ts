/**
 * Resources served by prompts (runvil.yaml's `mcp.resources`, src/config/mcp-resources.ts):
 * reading one runs its prompt, with a template's variables as the prompt's args, as
 * `tools/call` does (the run is a run like any other, in `/runs`), and the run's result is
 * the content: text, or for `encoding: base64` a blob. A caller sees and reads only the
 * resources whose prompt its key may run (`runs:start:<prompt>`).
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { matchResource, type McpResource, type ResourceMatch } from '../../config/mcp-resources.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { deploymentConfig } from '../deployment/deployment.ts';
import { startRun } from '../run-object/start-run.ts';
import { forbidden, holds, startScope, type Principal } from './mcp-caller.ts';
import { CALL_WAIT_MS } from './tool-call.ts';

/** One content item of `resources/read`. */
export type ResourceContents = { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string };

/** The resources runvil.yaml declares. */
export function declaredResources(): readonly McpResource[] {
  return deploymentConfig().mcp?.resources ?? [];
}

/** The declared resource `uri` names (with its variables), or null. */
export function declaredResource(uri: string): ResourceMatch | null {
  return matchResource(declaredResources(), uri);
}

/** True when `principal` may read the resources of `resource` (its key may run the prompt). */
export const mayRead = (principal: Principal, resource: McpResource): boolean => holds(principal, startScope(resource.prompt));

/** True when `principal` may read any declared resource. */
export const readsDeclared = (principal: Principal): boolean => declaredResources().some((resource) => mayRead(principal, resource));

/** The fixed resources `principal` may read, as `resources/list` lists them. */
export function listedResources(principal: Principal) {
  return declaredResources()
    .filter((resource) => resource.variables.length === 0 && mayRead(principal, resource))
    .map((resource) => ({ uri: resource.uri, name: resource.name, mimeType: resource.mimeType, ...describe(resource) }));
}

/** The resource templates `principal` may read, as `resources/templates/list` lists them. */
export function listedTemplates(principal: Principal) {
  return declaredResources()
    .filter((resource) => resource.variables.length > 0 && mayRead(principal, resource))
    .map((resource) => ({ uriTemplate: resource.uri, name: resource.name, mimeType: resource.mimeType, ...describe(resource) }));
}

const describe = (resource: McpResource) => (resource.description !== null ? { description: resource.description } : {});

/** Reads `uri`, the declared resource `match`: runs its prompt and answers with the result. */
export async function readDeclared(env: Env, principal: Principal, uri: string, match: ResourceMatch): Promise<ResourceContents> {
  const { resource, args } = match;
  if (!mayRead(principal, resource)) throw forbidden(startScope(resource.prompt));
  let view;
  try {
    ({ view } = await startRun(env, { prompt: resource.prompt, args: { ...args }, waitMs: CALL_WAIT_MS }));
  } catch (error) {
    // The variables do not fit the prompt's args (400, naming the arg), or the prompt is not deployed (404).
    if (error instanceof ApiError && error.status < 500) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri}: ${error.message}`);
    throw error;
  }
  if (view.status !== 'completed') {
    const why =
      view.status === 'failed' || view.status === 'cancelled'
        ? `its run ${view.run_id} ${view.status}${view.error ? `: ${view.error.message}` : ''}`
        : `its run ${view.run_id} is ${view.status} (it waits on something: answer or follow it at GET /runs/${view.run_id})`;
    throw new ProtocolError(ProtocolErrorCode.InternalError, `${uri} could not be read: ${why}`, { run_id: view.run_id });
  }
  const result = view.result ?? '';
  if (resource.encoding === 'text') return { uri, mimeType: resource.mimeType, text: result };
  const blob = result.replace(/\s+/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(blob))
    throw new ProtocolError(ProtocolErrorCode.InternalError, `${uri} could not be read: its prompt's result is not base64 (encoding: base64)`, {
      run_id: view.run_id,
    });
  return { uri, mimeType: resource.mimeType, blob };
}
