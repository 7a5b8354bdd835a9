/**
 * A configured MCP Pack in a run: its manifest from the tool list the run keeps
 * (mcp-tool-list.ts), and calls over the SDK's client. A tool's id is
 * `<pack id>/<MCP tool name>`; untrusted unless the Pack is trusted (the envelope wraps its
 * output); a tool with an `outputSchema` on a trusted Pack is structured. A call that
 * fails on the way fails with `<tool id>: the MCP server did not answer (reason)`.
 *
 * Questions: a 2026-07-28 server's `input_required` rounds are kept with the call and each
 * elicitation becomes a form ask of the run; the retry goes when they are answered, from this
 * execution or a later one (mcp-input-rounds.ts). A 2025-11-25 server's elicitation on the
 * open call becomes a form ask the same way (the server's message is the question, its schema
 * the form), answered like any ask; the operator's object, checked against the form, goes
 * back to the server (mcp-elicitation.ts). Such a question lives only as
 * long as the call's connection: a later execution of the run (after an eviction) fails the
 * call saying so. Progress notifications are handed to the run (`tool_progress` events).
 *
 * Tasks: a call the server answers with a task (the tasks extension) waits on it until it
 * ends (mcp-task-call.ts): on the run object's alarm in the Worker, on a timer on the command
 * line; its result is the call's.
 *
 * Connections are kept for the run's next calls (connecting costs a handshake), one per
 * call at a time, and closed when idle or when the run ends (`dispose`).
 */
import { resolveConfigValue, type ConfiguredPack, type McpSource } from '../../../config/deployment-config.ts';
import { resolveConfigUrl } from '../../../config/config-urls.ts';
import { pathText } from '../../../config/yaml-shape.ts';
import type { Pack, ToolContext, ToolManifest, ToolOutcome } from '../../pack.ts';
import { capOutput, outputCapExceeded, TOOL_OUTPUT_BYTES } from '../../tool-output-cap.ts';
import { shortReason, streamableHttp, type McpEndpoint, type McpTransportFactory } from './mcp-client.ts';
import { AnswerTooLarge, McpConnection, type CallResult } from './mcp-connection.ts';
import { DEFAULT_TASK_TIMEOUT_SECONDS, followTaskCall, resumeTaskCall, type TaskCall } from './mcp-task-call.ts';
import { elicit } from './mcp-elicitation.ts';
import { callInRounds } from './mcp-input-rounds.ts';
import { toolOutcome } from './mcp-output.ts';
import type { McpToolList } from './mcp-tool-list.ts';

/** How long a call may go without a word from the server (a result or a progress notification), an operator's answer aside. */
export const MCP_CALL_SILENCE_MS = 120_000;
/** The protocol whose servers ask with `input_required` rounds. */
const MODERN_PROTOCOL = '2026-07-28';

/** How long a connection the run is not using stays open for its next call. */
export const MCP_IDLE_MS = 15_000;

/** Environment variables `${NAME}` references are read from. */
export type ConfigVars = Readonly<Record<string, string | undefined>>;

/** One progress notification of a call. */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * The endpoint of the configured MCP source of Pack `fqName` with its `${NAME}` references
 * read from `vars`, or why it has none: a missing variable, or a URL the variables made into
 * one runvil.yaml could not have written (config-urls.ts).
 */
export function mcpEndpoint(fqName: string, source: McpSource, vars: ConfigVars): { ok: true; endpoint: McpEndpoint } | { ok: false; message: string } {
  const url = resolveConfigUrl(source.url, vars, pathText(['packs', fqName, 'mcp', 'url']));
  if (!url.ok) return { ok: false, message: url.error.message };
  const headers: Record<string, string> = Object.create(null);
  for (const [name, text] of source.headers) {
    const value = resolveConfigValue(text, vars);
    if (!value.ok) return { ok: false, message: value.error.message };
    if (/[\r\n\0]/.test(value.value)) return { ok: false, message: `runvil.yaml's header ${name} holds a line break once its variables are read` };
    headers[name] = value.value;
  }
  return { ok: true, endpoint: { url: url.value, headers: { ...headers } } };
}

/** The Pack id of a configured Pack: the name after the vendor. */
export const packIdOf = (fqName: string): string => fqName.slice(fqName.indexOf('/') + 1);

/** The manifest's tools of an MCP Pack, from the list the run keeps. */
export function mcpToolManifests(pack: ConfiguredPack, list: McpToolList): ToolManifest[] {
  if (!list.ok) return [];
  const id = packIdOf(pack.fqName);
  return list.tools.map((tool) => ({
    id: `${id}/${tool.name}`,
    description: tool.description,
    parameters: tool.parameters,
    output: pack.trusted && tool.outputSchema ? 'structured' : 'plain',
    trusted: pack.trusted,
  }));
}

/**
 * A Pack over a configured MCP server, with the tool list the run keeps; `onProgress` hears
 * each call's progress; its connections speak over the transport `transport` makes. An
 * output past TOOL_OUTPUT_BYTES ends the run with `Limit` (tool-output-cap.ts), the server's
 * answer cut off as it streams.
 */
export function mcpPack(
  pack: ConfiguredPack,
  list: McpToolList,
  vars: ConfigVars,
  onProgress?: (tool: string, context: ToolContext, progress: ToolProgress) => void,
  transport: McpTransportFactory = streamableHttp,
): Pack & { dispose(): Promise<void> } {
  if (pack.source.kind !== 'mcp') throw new Error(`${pack.fqName} is not an MCP Pack`);
  const source = pack.source;
  const tools = mcpToolManifests(pack, list);
  const byId = new Map(tools.map((tool) => [tool.id, tool]));
  const idle: { connection: McpConnection; timer: ReturnType<typeof setTimeout> }[] = [];
  let disposed = false;

  const release = (connection: McpConnection) => {
    if (disposed) return void connection.close();
    const timer = setTimeout(() => {
      const at = idle.findIndex((entry) => entry.connection === connection);
      if (at >= 0) idle.splice(at, 1);
      void connection.close();
    }, MCP_IDLE_MS);
    // An idle connection must not keep a command-line process alive.
    (timer as { unref?: () => void }).unref?.();
    idle.push({ connection, timer });
  };

  return {
    manifest: { fqName: pack.fqName, description: pack.description, tools },
    unavailableReason: () => (list.ok ? null : list.reason),
    async call(toolId, args, context): Promise<ToolOutcome> {
      const tool = byId.get(toolId);
      if (!tool) return { ok: false, message: `${toolId}: no such tool in ${pack.fqName}` };
      const endpoint = mcpEndpoint(pack.fqName, source, vars);
      if (!endpoint.ok) return { ok: false, message: `${toolId}: ${endpoint.message}` };
      const name = toolId.slice(toolId.indexOf('/') + 1);
      const taskCall: TaskCall = {
        pack: pack.fqName,
        toolId,
        endpoint: endpoint.endpoint,
        transport,
        structured: tool.output === 'structured',
        timeoutSeconds: source.timeoutSeconds ?? DEFAULT_TASK_TIMEOUT_SECONDS,
      };
      // A replay of a call that waits on its server's task waits again; it is not sent anew.
      const resumed = await resumeTaskCall(taskCall, context);
      if (resumed) return resumed;
      let task: Exclude<CallResult['task'], undefined> | null = null;
      const watchdog = new Watchdog(context.signal);
      const asked = { count: 0 };
      const refusal: { message: string | null } = { message: null };
      let connection: McpConnection | null = null;
      try {
        const reused = idle.pop();
        if (reused) clearTimeout(reused.timer);
        const open = (connection = reused?.connection ?? (await McpConnection.open(endpoint.endpoint, { signal: watchdog.signal, transport })));
        const outcome = await callInRounds(
          {
            send: (retry) => {
              watchdog.heard();
              // A round kept from an earlier execution is the 2026-07-28 protocol's: a server that now speaks another cannot take its retry.
              if (retry && open.protocolVersion() !== MODERN_PROTOCOL)
                throw new Error(`it no longer speaks ${MODERN_PROTOCOL}, the protocol its questions came in`);
              return open.callTool(name, args as Record<string, unknown>, {
                signal: watchdog.signal,
                ...(retry ? { retry } : {}),
                onProgress: (progress) => {
                  watchdog.heard();
                  onProgress?.(toolId, context, progress);
                },
                onElicit: (request) =>
                  watchdog.paused(async () => {
                    // The question lives on this connection only: a later execution of the run cannot answer it.
                    if (context.effect && context.rounds)
                      context.rounds.put(context.effect, { ...(context.rounds.get(context.effect) ?? { rounds: 0, asked: 0 }), held: true });
                    const elicited = await elicit(request, context, asked);
                    if ('result' in elicited) return elicited.result;
                    // An elicitation no form ask can hold (past the caps, no flat form) ends the call: it is neither asked nor answered.
                    refusal.message = elicited.refused;
                    watchdog.cancel();
                    return { action: 'cancel' as const };
                  }),
              });
            },
            waiting: (work) => watchdog.paused(work),
          },
          context,
        );
        if (refusal.message !== null) return { ok: false, message: `${toolId}: ${refusal.message}` };
        if ('refused' in outcome) {
          // The connection is sound: the server only asked what cannot be asked.
          release(connection);
          connection = null;
          return { ok: false, message: `${toolId}: ${outcome.refused}` };
        }
        const result = outcome.result;
        release(connection);
        connection = null;
        // The server made the call a task: it is followed once this send is done (below).
        if (result.task) task = result.task;
        else return capOutput(toolOutcome(toolId, result, tool.output === 'structured'), pack.fqName, toolId);
      } catch (error) {
        if (refusal.message !== null) return { ok: false, message: `${toolId}: ${refusal.message}` };
        if (error instanceof AnswerTooLarge) return outputCapExceeded(pack.fqName, toolId, TOOL_OUTPUT_BYTES);
        if (context.signal?.aborted) return { ok: false, message: `${toolId}: the call was cancelled` };
        return {
          ok: false,
          message: `${toolId}: the MCP server did not answer (${watchdog.expired ? `no word within ${MCP_CALL_SILENCE_MS / 1000} s` : shortReason(error)})`,
        };
      } finally {
        watchdog.stop();
        // A connection that failed mid-call is not trusted with another call.
        if (connection) void connection.close();
      }
      if (!task) return { ok: false, message: `${toolId}: the MCP server did not answer` };
      if (!task.ok) return { ok: false, message: `${toolId}: the MCP server did not answer (${task.reason})` };
      return followTaskCall(taskCall, task.task, context);
    },
    async dispose() {
      disposed = true;
      for (const entry of idle.splice(0)) {
        clearTimeout(entry.timer);
        await entry.connection.close();
      }
    },
  };
}

/**
 * Ends a call when the server says nothing for MCP_CALL_SILENCE_MS (a progress
 * notification is a word), or when the run's signal aborts; an operator's answer to an
 * elicitation may take as long as it takes.
 */
class Watchdog {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private waiting = 0;
  private readonly onAbort = () => this.controller.abort();
  expired = false;

  constructor(private readonly outer?: AbortSignal) {
    outer?.addEventListener('abort', this.onAbort);
    if (outer?.aborted) this.controller.abort();
    this.heard();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  heard(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.waiting > 0) return;
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort();
    }, MCP_CALL_SILENCE_MS);
  }

  async paused<T>(work: () => Promise<T>): Promise<T> {
    this.waiting++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    try {
      return await work();
    } finally {
      this.waiting--;
      this.heard();
    }
  }

  /** Ends the call now. */
  cancel(): void {
    this.controller.abort();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onAbort);
  }
}
