/**
 * The console's page frame: head, navigation, the token form, and the view's own part.
 * The server renders structure only; the run data arrives in the browser through the API
 * with the operator's token (console-script.ts), and is written there as text.
 */
import type { Child } from 'hono/jsx';

/** The console's views, each a page of its own. */
export type ConsoleView = 'runs' | 'run' | 'inbox' | 'prompts' | 'prompt';

/** Where each view's script and stylesheet are served from. */
export const SCRIPT_PATH = '/console/console.js';
export const STYLE_PATH = '/console/console.css';

const NAV: { view: ConsoleView; label: string; href: string }[] = [
  { view: 'runs', label: 'Runs', href: '/console' },
  { view: 'inbox', label: 'Inbox', href: '/console/inbox' },
  { view: 'prompts', label: 'Prompts', href: '/console/prompts' },
];

/** A page of the console: `view` and `data` tell the script what to load. */
export function Layout(props: { view: ConsoleView; title: string; data?: Record<string, string>; children: Child }) {
  const current = props.view === 'run' ? 'runs' : props.view === 'prompt' ? 'prompts' : props.view;
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(props.data ?? {})) data[`data-${key}`] = value;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title} · Runvil</title>
        <link rel="stylesheet" href={STYLE_PATH} />
        <script src={SCRIPT_PATH} defer></script>
      </head>
      <body data-view={props.view} {...data}>
        <header class="top">
          <a class="brand" href="/console">
            Runvil
          </a>
          <nav>
            {NAV.map((item) => (
              <a href={item.href} aria-current={item.view === current ? 'page' : undefined}>
                {item.label}
                {item.view === 'inbox' ? <span class="count" id="inbox-count" hidden></span> : null}
              </a>
            ))}
          </nav>
          <button type="button" id="forget-token" class="quiet">
            Forget token
          </button>
        </header>
        <section id="token-gate" class="gate" hidden>
          <form id="token-form">
            <h2>API token</h2>
            <p>
              The console calls this deployment's API with its token (RUNVIL_API_TOKEN), or a key (a key with the scope runs:read makes it read-only). It is
              kept in this tab only, until the tab closes.
            </p>
            <p id="token-problem" class="problem" role="alert" hidden></p>
            <label>
              Token <input type="password" name="token" id="token-input" autocomplete="off" required />
            </label>
            <button type="submit">Open the console</button>
          </form>
        </section>
        <main id="main" hidden>
          <p id="notice" class="problem" role="alert" hidden></p>
          <p id="read-only" class="muted" role="status" hidden></p>
          {props.children}
        </main>
        <noscript>The console needs JavaScript: it reads the API with your token, in the browser.</noscript>
      </body>
    </html>
  );
}
