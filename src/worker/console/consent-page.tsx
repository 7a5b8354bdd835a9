/**
 * The OAuth consent page (src/worker/oauth/consent.ts serves it at /oauth/authorize): an MCP
 * host asks to call this deployment's prompts; the person signs in with a Runvil key (the
 * root token or a key) and picks the scopes to grant, never more than the key has. A plain
 * form, no script: the page works where the console's script is not loaded. What the client
 * wrote about itself (its name, its redirect URI) is shown as text, which JSX escapes, and
 * marked as unverified; where the tokens go is shown as the redirect's host, as MCP asks.
 */
import { STYLE_PATH } from './layout.tsx';

/** A scope the page offers, and whether its box starts ticked. */
export interface OfferedScope {
  scope: string;
  checked: boolean;
}

/** What the consent page shows. */
export interface ConsentPageProps {
  clientName: string;
  /** The verified domain of a client known by its metadata document; absent for a client that registered itself. */
  clientDomain?: string;
  redirectHost: string;
  redirectIsLoopback: boolean;
  /** The consent's handle (the provider binds it to this browser). */
  handle: string;
  offered: readonly OfferedScope[];
  /** Scopes the client asked for that are not Runvil's: never granted, shown so that nothing is hidden. */
  foreign: readonly string[];
  /** What went wrong with the last post, for the person to fix. */
  problem: string | null;
}

/** What each scope lets the client do, in the words of the person granting it. */
export function scopeMeaning(scope: string): string {
  if (scope === 'runs:read') return 'read runs: their results, events, files and asks';
  if (scope === 'prompts:write') return 'upload prompts';
  if (scope === 'admin') return 'everything but managing keys';
  if (scope === 'runs:start:*') return 'start runs of every prompt (call every prompt as a tool)';
  if (scope === 'asks:answer:*') return "answer the asks of every prompt's runs";
  if (scope.startsWith('runs:start:')) return `start runs of the prompt ${scope.slice('runs:start:'.length)}`;
  if (scope.startsWith('asks:answer:')) return `answer the asks of the prompt ${scope.slice('asks:answer:'.length)}'s runs`;
  return scope;
}

/** The consent page. */
export function ConsentPage(props: ConsentPageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>Authorize {props.clientName} · Runvil</title>
        <link rel="stylesheet" href={STYLE_PATH} />
      </head>
      <body>
        <section class="gate consent">
          <form method="post">
            <h2>
              Allow <strong>{props.clientName}</strong> to use this deployment?
            </h2>
            <p>
              {props.clientDomain !== undefined ? (
                <>
                  Published by <strong>{props.clientDomain}</strong>.
                </>
              ) : (
                'This app registered itself: its name is not verified.'
              )}{' '}
              Access will be sent to <strong class="mono">{props.redirectHost}</strong>.
            </p>
            {props.redirectIsLoopback ? (
              <p class="problem">This sends access to an app on your computer. Continue only if you just started signing in from it.</p>
            ) : null}
            {props.problem !== null ? (
              <p id="consent-problem" class="problem" role="alert">
                {props.problem}
              </p>
            ) : null}
            <input type="hidden" name="handle" value={props.handle} />
            <label class="wide">
              Runvil key
              <input type="password" name="key" autocomplete="off" required />
            </label>
            <p class="muted">
              Sign in with the deployment's API token or a key made with <code>runvil keys create</code>. You can grant at most what that key may do.
            </p>
            <fieldset>
              <legend>Scopes to grant</legend>
              {props.offered.map((offer) => (
                <label>
                  <input type="checkbox" name="scope" value={offer.scope} checked={offer.checked} /> <code>{offer.scope}</code>{' '}
                  <span class="muted">{scopeMeaning(offer.scope)}</span>
                </label>
              ))}
            </fieldset>
            <label class="wide">
              More scopes (a prompt's own, separated by spaces)
              <input name="more" autocomplete="off" placeholder="runs:start:triage asks:answer:triage" />
            </label>
            {props.foreign.length > 0 ? <p class="muted">The app also asked for {props.foreign.join(', ')}: not scopes of Runvil, so not granted.</p> : null}
            <p>
              <button type="submit" name="decision" value="approve">
                Allow
              </button>{' '}
              <button type="submit" name="decision" value="deny" class="quiet" formnovalidate>
                Deny
              </button>
            </p>
          </form>
        </section>
      </body>
    </html>
  );
}

/** A page saying why the consent cannot go on (a request the provider refused, a page used twice). */
export function ConsentProblemPage(props: { problem: string }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="referrer" content="no-referrer" />
        <title>Authorization failed · Runvil</title>
        <link rel="stylesheet" href={STYLE_PATH} />
      </head>
      <body>
        <section class="gate consent">
          <h2>This authorization cannot go on</h2>
          <p id="consent-problem" class="problem" role="alert">
            {props.problem}
          </p>
          <p class="muted">Start signing in again from the app that sent you here.</p>
        </section>
      </body>
    </html>
  );
}
