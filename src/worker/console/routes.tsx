/**
 * `GET /console` and its pages, script and stylesheet. The pages carry no run data and need
 * no token: the script asks the operator for the API token and reads the API with it (no
 * cookie, so no request forgery). Every response forbids inline script and any origin but
 * this one; a page cannot be framed. (nosniff is the app's, on every response: nosniff.ts.)
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type { Env } from '../env.ts';
import { CONSOLE_SCRIPT } from './console-script.ts';
import { CONSOLE_STYLE } from './console-style.ts';
import { SCRIPT_PATH, STYLE_PATH } from './layout.tsx';
import { InboxPage, PromptPage, PromptsPage, RunPage, RunsPage } from './views.tsx';

/** The console's Content-Security-Policy: its own script and stylesheet, its own API, nothing inline. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const secureHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('content-security-policy', CONSOLE_CSP);
  c.header('referrer-policy', 'no-referrer');
  c.header('x-frame-options', 'DENY');
  if (!c.res.headers.has('cache-control')) c.header('cache-control', 'no-store');
};

/** A query parameter as one short string ('' when absent or repeated), for a form's value. */
const queryValue = (values: string[] | undefined): string => (values?.length === 1 ? values[0]!.slice(0, 200) : '');

/** The console routes. */
export const consoleRoutes = new Hono<{ Bindings: Env }>();

consoleRoutes.use('/console', secureHeaders);
consoleRoutes.use('/console/*', secureHeaders);

consoleRoutes.get('/console', (c) => c.html(<RunsPage prompt={queryValue(c.req.queries('prompt'))} status={queryValue(c.req.queries('status'))} />));
consoleRoutes.get('/console/runs/:id', (c) => c.html(<RunPage runId={c.req.param('id')} />));
consoleRoutes.get('/console/inbox', (c) => c.html(<InboxPage />));
consoleRoutes.get('/console/prompts', (c) => c.html(<PromptsPage />));
consoleRoutes.get('/console/prompts/:name', (c) => c.html(<PromptPage name={c.req.param('name')} />));

// The script and stylesheet change with the deployment only: a browser may keep them a while.
consoleRoutes.get(SCRIPT_PATH, (c) =>
  c.body(CONSOLE_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300' }),
);
consoleRoutes.get(STYLE_PATH, (c) => c.body(CONSOLE_STYLE, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=300' }));
