/**
 * `runvil run`'s listener for tool results: when the run calls an HTTP tool service, the
 * command line listens on a loopback port (127.0.0.1, `RUNVIL_CALLBACK_PORT` or a free one)
 * for `POST /runs/<run id>/tool-results/<call id>`, the route the Worker serves, with the
 * same rules: the call's own callback token (HMAC under a key this process draws at random),
 * `{"output": …}` or `{"error": "…"}`, 200 `{"accepted": true}`, the same result again 200,
 * a different one 409, an unknown call 404. So the same prompt and the same service work
 * against `runvil run` as against a deployment. It closes when the run ends.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Delivery } from '../host/memory-call-ledger.ts';
import { isCallId, toolResultOf, type ToolResult } from '../host/tool-calls.ts';
import type { Json } from '../json/json.ts';

/** The largest result body the listener reads: 1 MiB, as the Worker. */
const MAX_BODY_BYTES = 1024 * 1024;

/** The loopback listener of one run's tool results. */
export class CallbackListener {
  private readonly key = randomBytes(32);
  private server: Server | null = null;
  private origin: Promise<string> | null = null;
  /** Where accepted results go (the run's memory call ledger). */
  deliver: (callId: string, result: ToolResult) => Delivery = () => ({ ok: false, status: 404, message: 'this run has no tool calls' });

  constructor(
    private readonly runId: string,
    /** The port to listen on; 0 for any free one. */
    private readonly port = 0,
  ) {}

  /** The callback URL and token of a call; starts listening on the first. */
  async callback(callId: string): Promise<{ url: string; token: string }> {
    const origin = await (this.origin ??= this.listen());
    return { url: `${origin}/runs/${this.runId}/tool-results/${callId}`, token: this.tokenOf(callId) };
  }

  /** Stops listening (the run has ended). */
  close(): void {
    this.server?.close();
    this.server?.closeAllConnections();
    this.server = null;
  }

  private tokenOf(callId: string): string {
    return createHmac('sha256', this.key).update(`runvil tool call token v1\n${this.runId}\n${callId}`).digest('hex');
  }

  private listen(): Promise<string> {
    const server = createServer((request, response) => void this.handle(request, response));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        const address = server.address();
        resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : this.port}`);
      });
    });
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const answer = (status: number, body: object) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const refuse = (status: number, message: string) => answer(status, { error: { message } });
    const match = /^\/runs\/([^/]+)\/tool-results\/([^/?]+)$/.exec(request.url ?? '');
    if (request.method !== 'POST' || !match) return refuse(404, `no route ${request.method} ${(request.url ?? '').slice(0, 200)}`);
    const [, runId, callId] = match as unknown as [string, string, string];
    const header = request.headers.authorization ?? '';
    const token = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header)?.[1];
    if (!token) return refuse(401, 'missing credentials: send `Authorization: Bearer <callback_token>`');
    const expected = Buffer.from(isCallId(callId) && runId === this.runId ? this.tokenOf(callId) : randomBytes(32).toString('hex'));
    const given = Buffer.from(token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected) || runId !== this.runId) {
      return refuse(401, "wrong token: send the callback_token of this tool call (it delivers that call's result only)");
    }
    const text = await readBody(request);
    if (text === null) {
      // Cut off as it came: the call ends the run with Limit (tool-output-cap.ts) rather than wait for its deadline.
      this.deliver(callId, { oversized: true });
      return refuse(413, `the request body is larger than ${MAX_BODY_BYTES} bytes (1 MiB)`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return refuse(400, 'the request body is not valid JSON');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return refuse(400, 'the request body must be a JSON object');
    const parsed = toolResultOf(body as { [key: string]: Json });
    if (!parsed.ok) return refuse(400, parsed.message);
    const delivered = this.deliver(callId, parsed.result);
    if (!delivered.ok) return refuse(delivered.status, delivered.message);
    answer(200, { accepted: true });
  }
}

/** The body as text, or null when it is larger than MAX_BODY_BYTES. */
async function readBody(request: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
