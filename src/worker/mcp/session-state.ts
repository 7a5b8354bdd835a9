/**
 * What a 2025-11-25 session keeps in its Durable Object's storage, so that it outlives the
 * object's memory (an eviction, a restart of the local server, a deploy): who opened it and
 * the client's `initialize` (replayed into a new server, it gives the same negotiated
 * version, capabilities and client name: `answered_by` stays `mcp:<name>`), and each
 * question on the way to the client (an `elicitation/create` the SDK's legacy shim sent for
 * a call's `input_required`): the call it belongs to, the call's params, the stream it went
 * out on, and the request state and input key that turn the client's answer into the
 * call's retry. The server's ids of its requests are kept too, so that a new server never
 * reuses the id of a question a client may still answer. The event store of resumable
 * streams lives beside it in the same storage, under keys of its own.
 */
import type { Json } from '../../json/json.ts';
import type { DoStorage } from '../platform-types.ts';

/** A JSON-RPC id. */
export type RequestId = string | number;

/** Who opened the session and how. */
export interface SessionRecord {
  /** principalId of the principal that opened it: another's requests find no session. */
  owner: string;
  /** The params of the client's `initialize`, as sent. */
  initialize: { [key: string]: Json };
}

/** A question sent to the client that its answer continues. */
export interface PendingQuestion {
  /** The id of the `elicitation/create` request. */
  elicitation: RequestId;
  /** The id of the `tools/call` it belongs to. */
  call: RequestId;
  /** The call's params as the client sent them (its retry is sent with these). */
  params: { [key: string]: Json };
  /** The stream the call's answer goes out on (its events are kept by the event store), or null. */
  stream: string | null;
  /** The key of the question in the call's `inputResponses`. */
  key: string;
  /** The signed request state that names the run and its ask. */
  requestState: string;
}

const SESSION = 'session';
const QUESTION = 'session-question:';
const NEXT_ID = 'session-next-request-id';

/** The session's durable state over the object's storage. */
export class SessionState {
  constructor(private readonly storage: DoStorage) {}

  /** The session, or null when none was opened here (or it was closed). */
  session(): SessionRecord | null {
    return this.storage.kv.get<SessionRecord>(SESSION) ?? null;
  }

  /** Records the session as opened, before its id is given out. */
  async open(record: SessionRecord): Promise<void> {
    this.storage.kv.put(SESSION, record);
    await this.storage.sync();
  }

  /** The questions the client has not answered yet. */
  questions(): PendingQuestion[] {
    return [...this.storage.kv.list<PendingQuestion>({ prefix: QUESTION })].map(([, question]) => question);
  }

  /** Records a question before it is sent: once the client has it, its answer can outlive the object. */
  async ask(question: PendingQuestion): Promise<void> {
    this.storage.transactionSync(() => {
      this.storage.kv.put(QUESTION + String(question.elicitation), question);
      if (typeof question.elicitation === 'number' && question.elicitation >= this.nextRequestId()) {
        this.storage.kv.put(NEXT_ID, question.elicitation + 1);
      }
    });
    await this.storage.sync();
  }

  /** The question elicitation `id` asks, or null when none waits on an answer. */
  question(id: RequestId): PendingQuestion | null {
    return this.storage.kv.get<PendingQuestion>(QUESTION + String(id)) ?? null;
  }

  /** Forgets the questions of call `call`, which has been answered (a late answer to one of them continues nothing). */
  callEnded(call: RequestId): void {
    for (const [key, question] of this.storage.kv.list<PendingQuestion>({ prefix: QUESTION })) {
      if (question.call === call) this.storage.kv.delete(key);
    }
  }

  /** Forgets a question once its answer arrived (the first answer is the one taken). */
  answered(elicitation: RequestId): boolean {
    return this.storage.kv.delete(QUESTION + String(elicitation));
  }

  /** The lowest id a new server may give its requests: above every question's. */
  nextRequestId(): number {
    return this.storage.kv.get<number>(NEXT_ID) ?? 0;
  }

  /** Forgets the session (closed by the client). */
  close(): void {
    this.storage.transactionSync(() => {
      for (const [key] of this.storage.kv.list({ prefix: QUESTION })) this.storage.kv.delete(key);
      this.storage.kv.delete(SESSION);
      this.storage.kv.delete(NEXT_ID);
    });
  }
}
