/**
 * One connection to an MCP server over Streamable HTTP, with the official SDK's client:
 * the initialize handshake, every page of `tools/list`, and `tools/call` with progress
 * notifications and elicitation requests handed to the caller. The SDK's JSON Schema
 * validator is the one on @cfworker/json-schema: its default compiles code at run time,
 * which workerd refuses, and one validator everywhere keeps Node and workerd alike.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker-provider.js';
import { boundedFetch } from '../bounded-body.ts';
import { answerBytesFor, TOOL_OUTPUT_BYTES } from '../../tool-output-cap.ts';

/** Where a server is, with the `${NAME}` references of its configuration resolved. */
export interface McpEndpoint {
  url: string;
  headers: Record<string, string>;
}

/** An elicitation request as the caller sees it: the server's message and requested schema. */
export interface Elicitation {
  message: string;
  requestedSchema: unknown;
}

/** How long the handshake and a `tools/list` page may take. */
export const MCP_CONNECT_TIMEOUT_MS = 10_000;

/**
 * How often a call under way pings the server. A server that dies mid-call can close its
 * stream without a word (no error, no response): the SDK would wait for the response
 * forever. A failed ping ends the call.
 */
export const MCP_PING_MS = 5_000;

/** Client name and version the server sees. */
const CLIENT_INFO = { name: 'runvil', version: '0.1.0' };

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

  private constructor(private readonly client: Client) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { message?: unknown; requestedSchema?: unknown };
      // Only form elicitation is declared; a request outside a call is declined.
      if (!this.elicit) return { action: 'decline' };
      return this.elicit({ message: typeof params.message === 'string' ? params.message : '', requestedSchema: params.requestedSchema });
    });
  }

  /**
   * Connects and completes the handshake, or throws. Each answer of the server is read up to
   * `answerBytes` (counted as it streams: tool-output-cap.ts): past it the body is cancelled,
   * and the call under way ends with AnswerTooLarge.
   */
  static async open(endpoint: McpEndpoint, signal?: AbortSignal, answerBytes = answerBytesFor(TOOL_OUTPUT_BYTES)): Promise<McpConnection> {
    const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    const connection = new McpConnection(client);
    const fetch = boundedFetch(answerBytes, () => connection.passed());
    const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: endpoint.headers }, fetch });
    await client.connect(transport, { timeout: MCP_CONNECT_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    return connection;
  }

  /** An answer passed the bound: the call under way ends now rather than wait on a stream that was cut. */
  private passed(): void {
    this.answerPassed = true;
    this.endCall?.();
  }

  /** Every tool the server lists, following `nextCursor` to the last page. */
  async listTools(signal?: AbortSignal): Promise<Tool[]> {
    const tools: Tool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: MCP_CONNECT_TIMEOUT_MS, ...(signal ? { signal } : {}) });
      tools.push(...page.tools);
      cursor = page.nextCursor;
      // A server that hands back a cursor it gave before would page forever.
      if (cursor !== undefined && seen.has(cursor)) break;
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor !== undefined);
    return tools;
  }

  /**
   * Calls a tool. `onProgress` hears its progress notifications; `onElicit` answers the
   * elicitation requests the server makes during the call. The call has no timeout of
   * the SDK's: the caller's signal ends it (an operator may take hours to answer).
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    handlers: {
      signal: AbortSignal;
      onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
      onElicit?: (request: Elicitation) => Promise<ElicitResult>;
    },
  ): Promise<{ content?: unknown; structuredContent?: unknown; isError?: unknown }> {
    this.elicit = handlers.onElicit ?? null;
    this.answerPassed = false;
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
      const result = await this.client.callTool({ name, arguments: args }, undefined, {
        signal: controller.signal,
        // The SDK's own timer would end a call whose operator takes a while; the caller's watchdog decides instead.
        timeout: 2_147_483_647,
        ...(handlers.onProgress ? { onprogress: handlers.onProgress, resetTimeoutOnProgress: true } : {}),
      });
      // The legacy form `{ toolResult }` (protocol 2024-10-07) carries no content.
      return result as { content?: unknown; structuredContent?: unknown; isError?: unknown };
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

  /** Closes the connection (its session and streams); never throws. */
  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}

/** A short reason for a failure to reach or use a server: the error's first line, bounded. */
export function shortReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  let text = error instanceof Error ? error.message : String(error);
  // Node's fetch says only "fetch failed"; the cause says why (ECONNREFUSED, ...).
  if (text === 'fetch failed' && cause && typeof cause.message === 'string') text = `${text}: ${cause.message}`;
  text = text.split('\n')[0]!.trim();
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
