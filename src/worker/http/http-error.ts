/**
 * API errors: every refusal is a JSON body `{ "error": { "message", ... } }` with a 4xx or
 * 5xx status, the message saying what is wrong (and, where it helps, what to do).
 */
import { HTTPException } from 'hono/http-exception';

/** Extra fields of an error body, such as the parse errors of a prompt or the refused arg. */
export type ErrorDetails = Record<string, unknown>;

/** A refusal raised anywhere in a route; the app's error handler answers it as JSON. */
export class ApiError extends HTTPException {
  constructor(
    status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503,
    message: string,
    readonly details: ErrorDetails = {},
    /** Headers the refusal carries, such as a 429's `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(status, { message });
  }
}

/** The JSON body of an error. */
export function errorBody(message: string, details: ErrorDetails = {}): { error: { message: string } & ErrorDetails } {
  return { error: { message, ...details } };
}

/** The message of every unexpected failure: what went wrong inside stays in the log. */
export const INTERNAL_ERROR_MESSAGE = 'internal error: the server failed to answer this request; the failure is logged';

/**
 * The response for an error thrown by a route: ApiError and HTTPException as they are; any
 * other error is logged and answered as a generic 500, since an exception's text (a stack
 * overflow, a type error in a library) says nothing useful to a client and may say too much.
 */
export function errorResponse(error: unknown, request?: Request): Response {
  if (error instanceof ApiError) return Response.json(errorBody(error.message, error.details), { status: error.status, headers: error.headers });
  if (error instanceof HTTPException) return Response.json(errorBody(error.message || 'bad request'), { status: error.status });
  const where = request ? `${request.method} ${new URL(request.url).pathname.slice(0, 200)}` : 'a request';
  console.error(`${where} failed:`, error instanceof Error ? (error.stack ?? error.message) : String(error));
  return Response.json(errorBody(INTERNAL_ERROR_MESSAGE, { kind: 'internal' }), { status: 500 });
}
