/**
 * Response bodies read with a byte bound: counted as they stream, and cut off once they pass
 * it, so a server that answers 100 MB is never read whole into memory. For the answers of
 * servers a deployment calls (MCP servers, HTTP tool services).
 */

/** Statuses whose responses carry no body, which a Response cannot be made with. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** The body of a response as text, or null when it passes `limit` bytes (by Content-Length, or as it streams). */
export async function boundedText(response: Response, limit: number): Promise<string | null> {
  if (declaredLength(response) > limit) {
    await response.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** The bytes a counting fetch may read: one response's own, or shared by every response of a read. */
export interface ByteBudget {
  readonly limit: number;
  /** The bytes left. */
  room(): number;
  /** Counts `bytes` read; false once the count passes the limit (the body is cut off there). */
  spend(bytes: number): boolean;
}

/** A budget of `limit` bytes; `passed` hears each spend that passes it. */
export function byteBudget(limit: number, passed: () => void): ByteBudget {
  let spent = 0;
  return {
    limit,
    room: () => limit - spent,
    spend(bytes) {
      spent += bytes;
      if (spent <= limit) return true;
      passed();
      return false;
    },
  };
}

/**
 * A fetch whose responses' bodies are counted against the budget `budgetOf` gives each
 * response, and fail as they pass it, before the reader sees the error's cause; a response
 * whose Content-Length passes the room left is refused before its body is read. For a client
 * that reads the body itself (the MCP SDK's transport), which can be handed a fetch but not
 * a bound.
 */
export function countingFetch(budgetOf: () => ByteBudget, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    const budget = budgetOf();
    const tooLarge = () => new Error(`the server's answer is larger than ${budget.limit} bytes`);
    const declared = declaredLength(response);
    if (declared > budget.room()) {
      budget.spend(declared);
      await response.body.cancel().catch(() => undefined);
      throw tooLarge();
    }
    const reader = response.body.getReader();
    // Pulled by hand, so that nothing is read ahead of the client: a chunk is read off the
    // wire when the client asks for one, and a failure of the connection reaches it as it is.
    const counted = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          if (budget.spend(value.byteLength)) return controller.enqueue(value);
          // Cancelled: nothing more is read off the wire.
          await reader.cancel().catch(() => undefined);
          controller.error(tooLarge());
        } catch (error) {
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason).catch(() => undefined),
    });
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** A fetch whose responses' bodies fail as they pass `limit` bytes, each response counted on its own; `passed` hears it. */
export function boundedFetch(limit: number, passed: () => void, inner: typeof fetch = fetch): typeof fetch {
  return countingFetch(() => byteBudget(limit, passed), inner);
}

function declaredLength(response: Response): number {
  const declared = Number(response.headers.get('content-length') ?? 'NaN');
  return Number.isFinite(declared) ? declared : -1;
}
