/**
 * A 2025-11-25 MCP session, held in a Durable Object of its own (as Cloudflare's McpAgent
 * holds each session): its server and Streamable HTTP transport live in the object's
 * memory, so the server's `elicitation/create` on a call's stream and the caller's answer,
 * which arrives as another POST, meet in the same place. The session id is the object's
 * id; the Worker routes every request that carries it here (mcp-routes.ts). The session
 * belongs to the principal that opened it: another's requests find no session.
 *
 * The session outlives the object's memory (an eviction, a restart, a deploy): what it is
 * and the questions on their way to the client are kept in the object's storage
 * (session-state.ts). A request that finds no server in memory builds one and replays the
 * client's handshake into it (session-transport.ts); a client's answer to a question that
 * a server now gone sent is the retry of its call, sent into the new server with the
 * question's request state, so the run's ask is answered by the MCP caller and the call's
 * answer goes out on the stream the client resumes. A session the client closed (DELETE)
 * is forgotten; the runs it started live on in their own objects.
 */
import { DurableObject } from 'cloudflare:workers';
import {
  isJSONRPCRequest,
  isJSONRPCResponse,
  isJSONRPCResultResponse,
  WebStandardStreamableHTTPServerTransport,
  type CallToolRequestParams,
  type InputRequiredResult,
  type JSONRPCMessage,
  type JSONRPCResponse,
  type RequestId,
} from '@modelcontextprotocol/server';
import type { Json } from '../../json/json.ts';
import type { Env } from '../env.ts';
import type { DoId, DoNamespace } from '../platform-types.ts';
import { principalId, type Principal } from './mcp-caller.ts';
import { mcpServer } from './mcp-server.ts';
import { SessionEventStore } from './session-event-store.ts';
import { SessionState, type PendingQuestion } from './session-state.ts';
import { answerOn, raiseRequestIds, replayHandshake, standaloneStream, streamOf } from './session-transport.ts';

/** What the Worker asks of a session object. */
export interface McpSessionApi {
  /** Serves one HTTP request of the session for `principal` (the Worker has authenticated it). */
  serve(request: Request, principal: Principal, initialize: boolean): Promise<Response>;
}

/** The session objects' namespace (wrangler.toml's MCP_SESSIONS binding). */
export function mcpSessions(env: Env): DoNamespace<McpSessionApi> {
  return env.MCP_SESSIONS as DoNamespace<McpSessionApi>;
}

/** The object of session `sessionId`, or null when no session could have that id. */
export function sessionObject(env: Env, sessionId: string): McpSessionApi | null {
  if (!/^[0-9a-f]{64}$/.test(sessionId)) return null;
  let id: DoId;
  try {
    id = mcpSessions(env).idFromString(sessionId);
  } catch {
    return null;
  }
  return mcpSessions(env).get(id);
}

/** The transport's answer to a request for a session it does not have. */
export function sessionNotFound(): Response {
  return Response.json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }, { status: 404 });
}

/** How long a call continued after a restart waits for the client to listen again (its standalone GET stream) before it is sent anyway. */
export const LISTEN_WAIT_MS = 10_000;

/** How long a client waits before it reconnects to a stream that closed (the priming event's `retry`). */
export const RECONNECT_AFTER_MS = 1_000;

/** A call's questions, from its `input_required` until the SDK's shim sends them. */
interface Asking {
  params: CallToolRequestParams;
  result: InputRequiredResult;
}

/** One MCP session. */
export class McpSession extends DurableObject<Env> implements McpSessionApi {
  private transport: WebStandardStreamableHTTPServerTransport | null = null;
  private owner: string | null = null;
  /** Brings the session back from storage once, however many requests wait on it. */
  private restoring: Promise<boolean> | null = null;
  private readonly state = new SessionState(this.ctx.storage);
  /** The ids of the questions this server sent (their answers are its own); a question in storage but not here was sent by a server now gone. */
  private readonly live = new Set<string>();
  private readonly asking = new Map<string, Asking>();
  /** Settles when the client listens on its standalone stream (again). */
  private listening = signal();

  async serve(request: Request, principal: Principal, initialize: boolean): Promise<Response> {
    if (this.transport === null) {
      if (initialize) await this.open(request, principal);
      else if (!(await this.restore(request.url, principal))) return sessionNotFound();
    }
    if (this.owner !== principalId(principal) || this.transport === null) return sessionNotFound();
    const response = await this.transport.handleRequest(request);
    if (request.method === 'GET' && response.ok && !request.headers.has('last-event-id')) this.listening.resolve();
    return response;
  }

  /** A new session: recorded before its id reaches the client. */
  private async open(request: Request, principal: Principal): Promise<void> {
    const initialize = await initializeParams(request);
    await this.state.open({ owner: principalId(principal), initialize });
    await this.connect(principal);
  }

  /** The session as it was before the object lost its memory; false when there is none (or it is another's). */
  private restore(url: string, principal: Principal): Promise<boolean> {
    this.restoring ??= (async () => {
      const session = this.state.session();
      if (session === null || session.owner !== principalId(principal)) return false;
      const { transport, server } = await this.connect(principal);
      if (!(await replayHandshake(transport, url, session.initialize, this.ctx.id.toString()))) {
        this.transport = null;
        return false;
      }
      raiseRequestIds(server, this.state.nextRequestId());
      // Without an event store the call's own stream cannot be resumed: its answer goes out on the stream the client listens on.
      for (const question of this.state.questions()) {
        const stream = this.resumable ? question.stream : standaloneStream(transport);
        if (stream !== null) answerOn(transport, question.call, stream);
      }
      return true;
    })().finally(() => {
      this.restoring = null;
    });
    return this.restoring;
  }

  /** Each stream's events, kept so that a client resumes a call's stream with `Last-Event-ID` (session-event-store.ts). */
  private readonly events = new SessionEventStore(this.ctx.storage);
  /** True when the transport keeps each stream's events, so a client resumes a call's stream with `Last-Event-ID`. */
  private readonly resumable = true;

  private async connect(principal: Principal) {
    this.listening = signal();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => this.ctx.id.toString(),
      eventStore: this.events,
      retryInterval: RECONNECT_AFTER_MS,
      onsessionclosed: () => {
        this.transport = null;
        this.owner = null;
        this.state.close();
        this.events.clear();
      },
    });
    const server = await mcpServer(this.env, principal, {
      onInputRequired: (call, params, result) => this.asking.set(String(call), { params, result }),
    });
    await server.connect(transport);
    this.keepQuestions(transport);
    this.transport = transport;
    this.owner = principalId(principal);
    return { transport, server };
  }

  /** Keeps each question the server sends until its answer arrives, and turns the answer to one a server now gone sent into its call's retry. */
  private keepQuestions(transport: WebStandardStreamableHTTPServerTransport): void {
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      const call = options?.relatedRequestId;
      if (isJSONRPCRequest(message) && message.method === 'elicitation/create' && call !== undefined) {
        const question = this.questionOf(message.id, call, streamOf(transport, call));
        if (question) {
          await this.state.ask(question);
          this.live.add(String(message.id));
        }
      } else if (isJSONRPCResponse(message) && message.id !== undefined && this.asking.delete(String(message.id))) {
        this.state.callEnded(message.id);
      }
      return send(message, options);
    };
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (isJSONRPCResponse(message) && message.id !== undefined) {
        const question = this.state.question(message.id);
        this.state.answered(message.id);
        if (!this.live.delete(String(message.id)) && question !== null) {
          const retry = retryOf(question, message);
          if (this.resumable) deliver?.(retry, extra);
          else void this.listened(LISTEN_WAIT_MS).then(() => deliver?.(retry, extra));
          return;
        }
      }
      deliver?.(message, extra);
    };
  }

  /** Settles when the client listens on its standalone stream, or after `ms`. */
  private listened(ms: number): Promise<void> {
    return Promise.race([this.listening.promise, new Promise<void>((resolve) => setTimeout(resolve, ms))]);
  }

  /** The question elicitation `id` of call `call` asks, from the call's `input_required`. */
  private questionOf(id: RequestId, call: RequestId, stream: string | null): PendingQuestion | null {
    const asking = this.asking.get(String(call));
    const keys = Object.keys(asking?.result.inputRequests ?? {});
    if (!asking || keys.length !== 1 || typeof asking.result.requestState !== 'string') return null;
    return {
      elicitation: id,
      call,
      params: asking.params as unknown as { [key: string]: Json },
      stream,
      key: keys[0]!,
      requestState: asking.result.requestState,
    };
  }
}

/** The call of `question` again, carrying the client's answer and the question's request state: the retry 2026-07-28 would send. */
function retryOf(question: PendingQuestion, answer: JSONRPCResponse): JSONRPCMessage {
  // A client that failed to ask its user declined, as far as the run is concerned: the ask stays pending for the inbox.
  const response = isJSONRPCResultResponse(answer) ? answer.result : { action: 'decline' };
  return {
    jsonrpc: '2.0',
    id: question.call,
    method: 'tools/call',
    params: { ...question.params, requestState: question.requestState, inputResponses: { [question.key]: response } },
  } as JSONRPCMessage;
}

/** A promise and what settles it. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** The params of an `initialize` request (the route checked that it is one). */
async function initializeParams(request: Request): Promise<{ [key: string]: Json }> {
  try {
    const body = (await request.clone().json()) as { params?: { [key: string]: Json } };
    return body.params ?? {};
  } catch {
    return {};
  }
}
