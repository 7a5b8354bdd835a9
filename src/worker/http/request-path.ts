/**
 * The request path, checked once for every route: a path whose percent-encoding does not
 * decode (`%zz`, a lone `%`, bytes that are not UTF-8 such as `%E0%A4%A`) is refused with 400
 * before routing, so that no route parameter is ever half-decoded and no route's own decoding
 * can throw.
 */
import type { MiddlewareHandler } from 'hono';
import { ApiError } from './http-error.ts';

/** The raw (still percent-encoded) path of a request. */
export const rawPath = (request: Request): string => new URL(request.url).pathname;

/** Middleware: 400 for a path that is not valid percent-encoded UTF-8. */
export const checkPathEncoding: MiddlewareHandler = async (c, next) => {
  const path = rawPath(c.req.raw);
  if (path.includes('%')) {
    for (const segment of path.split('/')) {
      try {
        decodeURIComponent(segment);
      } catch {
        const shown = segment.length > 60 ? `${segment.slice(0, 60)}...` : segment;
        throw new ApiError(
          400,
          `the path segment ${JSON.stringify(shown)} is not valid percent-encoding: each % must begin %XX (two hex digits), and the bytes must be UTF-8`,
        );
      }
    }
  }
  await next();
};
