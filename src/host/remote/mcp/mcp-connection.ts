/**
 * One connection to an MCP server, with the official SDK's v2 client (mcp-client.ts): the
 * protocol negotiated (2026-07-28, or the 2025-11-25 initialize handshake), and `tools/call`
 * with progress notifications. A 2025-11-25 server's elicitation requests on the call's
 * stream are handed to the caller while the call is open. A 2026-07-28 server's
 * `input_required` answer ends the send (the client's manual mode): the caller gets its input
 * requests and request state, and sends the retry itself (mcp-input-rounds.ts), so nothing
 * holds the call open while a person decides. It speaks over the transport its factory
 * makes: Streamable HTTP in production, through a fetch that bounds each answer of the server.
 */
import type { Client, ElicitResult } from '@modelcontextprotocol/client';
import { boundedFetch } from '../bounded-body.ts';
import { answerBytesFor, TOOL_OUTPUT_BYTES } from '../../tool-output-cap.ts';
import { catchTaskAnswers, type CaughtTask } from './mcp-tasks.ts';
import { MCP_CONNECT_TIMEOUT_MS, newMcpClient, shortReason, streamableHttp, type McpEndpoint, type McpTransportFactory } from './mcp-client.ts';

/** An elicitation request as the caller sees it: the server's message and requested schema. */
export interface Elicitation {
  message: string;
  requestedSchema: unknown;
}

/**
 * How often a call under way pings the server. A server that dies mid-call can close its
 * stream without a word (no error, no response): the SDK would wait for the response
 * forever. A failed ping ends the call.
 */
export const MCP_PING_MS = 5_000;

/** A 2026-07-28 server's answer that it needs input first: what it asks (`inputRequests`, by key) and the state its retry carries. */
export interface InputRequired {
  inputRequests: unknown;
  requestState?: unknown;
}

/**
 * A tool's result as a server sends it (only the fields read here), or, as `inputRequired`,
 * its answer that it needs input first, or, as `task`, the task it made of the call (the tasks
 * extension, mcp-tasks.ts).
 */
export interface CallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  inputRequired?: InputRequired;
  task?: Exclude<CaughtTask, null>;
}

/** What a retry of an `input_required` round carries: the server's request state, byte for byte, and the answers by input request key. */
export interface RoundRetry {
  requestState?: string;
  inputResponses?: Record<string, unknown>;
}

/** Thrown by callTool when the server's answer passed the bound on one answer's bytes. */
export class AnswerTooLarge extends Error {
  readonly kind = 'AnswerTooLarge';
}

/** A connected client; `elicit` answers the server's elicitation requests of the call under way. */
export class McpConnection {
  /** Answers an elicitation of the call under way; set by each call. */
  private elicit: ((request: Elicitation) => Promise<ElicitResult>) | null = null;
  /** Ends the call under way; set by each call. */
  private endCall: (() => void) | null = null;
  /** True once an answer passed the bound during the call under way. */
  private answerPassed = false;
  /** The task answers the transport caught (the SDK's client refuses them). */
  private tasks: { take(): CaughtTask } | null = null;

  private constructor(private readonly client: Client) {
    // On 2025-11-25 the server sends this request during the call; on 2026-07-28 the client
    // meets an `input_required` answer's elicitation with the same handler, then retries.
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { message?: unknown; requestedSchema?: unknown };
      // Only form elicitation is declared; a request outside a call is declined.
      if (!this.elicit) return { action: 'decline' };
      return this.elicit({ message: typeof params.message === 'string' ? params.message : '', requestedSchema: params.requestedSchema });
    });
  }

  /**
   * Connects over the transport `options.transport` makes (Streamable HTTP unless told
   * otherwise) and completes the handshake, or throws. Over HTTP each answer of the server is
   * read up to `answerBytes` (counted as it streams: tool-output-cap.ts): past it the body is
   * cancelled, and the call under way ends with AnswerTooLarge.
   */
  static async open(
    endpoint: McpEndpoint,
    options: { signal?: AbortSignal; answerBytes?: number; transport?: McpTransportFactory } = {},
  ): Promise<McpConnection> {
    const client = newMcpClient('manual');
    const connection = new McpConnection(client);
    const fetch = boundedFetch(options.answerBytes ?? answerBytesFor(TOOL_OUTPUT_BYTES), () => connection.passed());
    const transport = await (options.transport ?? streamableHttp)(endpoint, fetch);
    await client.connect(transport, { timeout: MCP_CONNECT_TIMEOUT_MS, ...(options.signal ? { signal: options.signal } : {}) });
    connection.tasks = catchTaskAnswers(transport);
    return connection;
  }

  /** An answer passed the bound: the call under way ends now rather than wait on a stream that was cut. */
  private passed(): void {
    this.answerPassed = true;
    this.endCall?.();
  }

  /**
   * Calls a tool, or sends the retry of an `input_required` round (`retry`). `onProgress`
   * hears its progress notifications; `onElicit` answers the elicitation requests a
   * 2025-11-25 server makes during the call. Answers the result, or the server's
   * `input_required`. The call has no timeout of the SDK's: the caller's signal ends it (an
   * operator may take hours to answer an elicitation on the open call).
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    handlers: {
      signal: AbortSignal;
      onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
      onElicit?: (request: Elicitation) => Promise<ElicitResult>;
      retry?: RoundRetry;
    },
  ): Promise<CallResult> {
    this.elicit = handlers.onElicit ?? null;
    this.answerPassed = false;
    this.tasks?.take();
    const controller = new AbortController();
    const abort = () => controller.abort();
    this.endCall = abort;
    handlers.signal.addEventListener('abort', abort);
    if (handlers.signal.aborted) abort();
    let pingFailure: unknown = null;
    const pinger = setInterval(() => {
      this.client.ping({ timeout: MCP_CONNECT_TIMEOUT_MS }).catch((error: unknown) => {
        pingFailure ??= error;
        controller.abort();
      });
    }, MCP_PING_MS);
    try {
      const retry = handlers.retry;
      const result = await this.client.callTool(
        {
          name,
          arguments: args,
          ...(retry?.requestState !== undefined ? { requestState: retry.requestState } : {}),
          ...(retry?.inputResponses !== undefined ? { inputResponses: retry.inputResponses } : {}),
        },
        {
          signal: controller.signal,
          // The client hands an `input_required` answer back rather than fulfil it: its rounds are the run's to keep.
          allowInputRequired: true,
          // The SDK's own timer would end a call whose operator takes a while; the caller's watchdog decides instead.
          timeout: 2_147_483_647,
          ...(handlers.onProgress ? { onprogress: handlers.onProgress, resetTimeoutOnProgress: true } : {}),
        },
      );
      const task = this.tasks?.take();
      if (task) return { task };
      const answer = result as { resultType?: unknown; inputRequests?: unknown; requestState?: unknown };
      if (answer.resultType === 'input_required') return { inputRequired: { inputRequests: answer.inputRequests, requestState: answer.requestState } };
      // The legacy form `{ toolResult }` (protocol 2024-10-07) carries no content.
      return result as CallResult;
    } catch (error) {
      if (this.answerPassed) throw new AnswerTooLarge(`the server's answer passed the bound on one answer`);
      if (pingFailure !== null) throw new Error(`it stopped answering during the call: ${shortReason(pingFailure)}`);
      throw error;
    } finally {
      clearInterval(pinger);
      handlers.signal.removeEventListener('abort', abort);
      this.elicit = null;
      this.endCall = null;
    }
  }

  /** The protocol version negotiated with the server: 2026-07-28, or 2025-11-25 and older. */
  protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion();
  }

  /** Closes the connection (its session and streams); never throws. */
  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}
