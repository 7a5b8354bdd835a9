/**
 * The console's one script, served as /console/console.js: it asks for the API token, reads
 * the API with it, and fills the page the server rendered (views.tsx). Plain browser
 * JavaScript with no framework and no build step. Every text from a run, a prompt, a tool,
 * a model or an operator enters the page as a text node or an attribute value, never as
 * HTML; links are built from this origin's paths only.
 *
 * The text is put together from fragments by concept, in script/ (each a String.raw template
 * that holds no backtick and no dollar-brace), in the order they run.
 */
import { BASE } from './script/base.ts';
import { ASK_FORM } from './script/ask-form.ts';
import { ASKS } from './script/asks.ts';
import { RUNS } from './script/runs.ts';
import { RUN } from './script/run.ts';
import { INBOX } from './script/inbox.ts';
import { PROMPTS } from './script/prompts.ts';
import { START } from './script/start.ts';

/** The script's text. */
export const CONSOLE_SCRIPT = BASE + ASK_FORM + ASKS + RUNS + RUN + INBOX + PROMPTS + START;
