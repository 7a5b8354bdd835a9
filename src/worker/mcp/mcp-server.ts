/**
 * The MCP server of one caller (the SDK's low-level `Server`: the tools are the deployed
 * prompts, known only per request): `tools/list` lists the prompts the caller may run,
 * `tools/call` runs one (tool-call.ts), and run files are resources (run-resources.ts).
 * One definition serves both eras: a fresh instance per request for 2026-07-28
 * (createMcpHandler), one per session for 2025-11-25 (mcp-session.ts), where the SDK's
 * legacy shim turns an `input_required` answer into `elicitation/create` on the call's stream.
 */
import {
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolRequestParams,
  type InputRequiredResult,
  type RequestId,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';
import type { Env } from '../env.ts';
import { resultShaper } from './call-result.ts';
import { forbidden, holds, principalId, startScope, type Principal } from './mcp-caller.ts';
import { askStateCodec, type AskState } from './request-state.ts';
import { promptOfTool, servedTool, servedTools } from './served-tools.ts';
import { callTool, invalidState } from './tool-call.ts';
import { registerRunResources } from './run-resources.ts';
import { registerSubscriptions } from './resource-subscriptions.ts';
import { followProgress } from './run-progress.ts';
import { registerTasks, TASKS_EXTENSION } from './mcp-tasks.ts';

/** The server's name and version, as `initialize` and `server/discover` give them. */
export const SERVER_INFO = { name: 'runvil', version: '0.1.0' };

/** What a server's owner hears of its calls. */
export interface ServerHooks {
  /** A call answered with questions for the caller (a 2025-11-25 session keeps them, mcp-session.ts). */
  onInputRequired?(call: RequestId, params: CallToolRequestParams, result: InputRequiredResult): void;
}

/** A server for `principal`. */
export async function mcpServer(env: Env, principal: Principal, hooks: ServerHooks = {}): Promise<Server> {
  const codec = await askStateCodec(env, principalId(principal));
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, resources: { subscribe: true }, extensions: { [TASKS_EXTENSION]: {} } },
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    ...(codec ? { requestState: { verify: (state: string, ctx: ServerContext) => codec.verify(state, ctx) } } : {}),
  });

  server.setRequestHandler('tools/list', async () => {
    const { served } = await servedTools(env.RUNVIL_KV);
    return {
      tools: served
        .filter((tool) => holds(principal, startScope(tool.prompt)))
        .map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })),
    };
  });

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const name = request.params.name;
    const state = stateOf(ctx, codec !== null);
    // A retry's verified state names the run its tool started: the prompt need not be read again (its run has its own copy).
    const retried = state !== undefined ? promptOfTool(name) : null;
    const tool = retried !== null ? { name, prompt: retried } : await servedTool(env.RUNVIL_KV, name);
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const scope = startScope(tool.prompt);
    if (!holds(principal, scope)) throw forbidden(scope);
    const capabilities = server.getClientCapabilities();
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const result = await callTool({
      env,
      tool,
      args: request.params.arguments,
      state,
      responses: ctx.mcpReq.inputResponses,
      answeredBy: answeredBy(server),
      shape: resultShaper({ env, tool: tool.name, canElicit: capabilities?.elicitation !== undefined, takesTasks: takesTasks(capabilities), codec, ctx }),
      ...(progressToken !== undefined
        ? {
            follow: (runId: string) =>
              followProgress(env, runId, (progress, message) =>
                ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, message } }),
              ),
          }
        : {}),
    });
    if (hooks.onInputRequired && isInputRequiredResult(result)) hooks.onInputRequired(ctx.mcpReq.id, request.params, result);
    return result;
  });

  registerRunResources(server, env, principal);
  registerSubscriptions(server, env, principal);
  registerTasks(server, env, principal, () => answeredBy(server));
  return server;
}

/** The verified request state of a retry; without a codec to verify it, a state continues nothing. */
function stateOf(ctx: ServerContext, verified: boolean): AskState | undefined {
  const state = ctx.mcpReq.requestState<AskState>();
  if (state !== undefined && !verified) throw invalidState();
  return state;
}

/** `answered_by` of an answer this server's caller gives: `mcp:<clientInfo.name>`, else `mcp`. */
function answeredBy(server: Server): string {
  const name = server.getClientVersion()?.name;
  return name ? `mcp:${name}` : 'mcp';
}

/** True when the caller's capabilities declare the tasks extension (2026-07-28: per request). */
function takesTasks(capabilities: ReturnType<Server['getClientCapabilities']>): boolean {
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return extensions !== undefined && extensions !== null && Object.hasOwn(extensions, TASKS_EXTENSION);
}
