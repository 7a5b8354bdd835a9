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
    status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 500 | 503,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(status, { message });
  }
}

/** The JSON body of an error. */
export function errorBody(message: string, details: ErrorDetails = {}): { error: { message: string } & ErrorDetails } {
  return { error: { message, ...details } };
}

/** The response for an error thrown by a route: ApiError and HTTPException as they are, the rest as 500. */
export function errorResponse(error: unknown): Response {
  if (error instanceof ApiError) return Response.json(errorBody(error.message, error.details), { status: error.status });
  if (error instanceof HTTPException) return Response.json(errorBody(error.message || 'bad request'), { status: error.status });
  const message = error instanceof Error ? error.message : String(error);
  return Response.json(errorBody(`internal error: ${message}`), { status: 500 });
}
