/**
 * `X-Content-Type-Options: nosniff` on every response of the Worker: a run's file is served
 * as `text/plain`, and its text comes from prompts, tools and models; without the header a
 * browser may sniff such text as HTML or script and run it on the deployment's origin.
 * One middleware, first in the app, so routes, errors, the console and files all carry it.
 */
import type { MiddlewareHandler } from 'hono';

/** Sets `X-Content-Type-Options: nosniff` on the response, whatever produced it. */
export const noSniff: MiddlewareHandler = async (c, next) => {
  try {
    await next();
  } finally {
    try {
      c.res.headers.set('x-content-type-options', 'nosniff');
    } catch {
      // A response with immutable headers (one passed through from a fetch): a copy takes the header.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set('x-content-type-options', 'nosniff');
    }
  }
};
