/**
 * The server's own secrets, which runvil.yaml may not name as `${NAME}`: the file says where
 * requests go (an MCP server's headers, a tool service, a notify endpoint), so a reference to
 * one of these would hand the deployment's API token, the secret answer tokens are derived
 * from, a webhook's signing secret, or a model or search provider's key to that endpoint.
 * A service the file talks to gets a secret of its own. The names are those the Worker and
 * the command line read (src/worker/env.ts, src/models/directory.ts, packs/web/).
 */

/** Variables the server reads as its own secrets, each with what it is, for the message. */
const SERVER_SECRETS: ReadonlyMap<string, string> = new Map([
  ['RUNVIL_API_TOKEN', 'the API token'],
  ['RUNVIL_ASK_SECRET', 'the secret ask answer tokens are derived from'],
  ['OPENAI_API_KEY', "the OpenAI provider's key"],
  ['ANTHROPIC_API_KEY', "the Anthropic provider's key"],
  ['BRAVE_SEARCH_API_KEY', "web/search's Brave key"],
  ['TAVILY_API_KEY', "web/search's Tavily key"],
]);

/** Every prompt's webhook secret is `RUNVIL_WEBHOOK_SECRET_<PROMPT>`. */
const WEBHOOK_SECRET_PREFIX = 'RUNVIL_WEBHOOK_SECRET';

/** Names of the server's fixed secrets (tests check each is refused). */
export const SERVER_SECRET_NAMES: readonly string[] = [...SERVER_SECRETS.keys()];

/**
 * What `name` is when it names one of the server's own secrets, or null. Compared without
 * regard to case: on Windows, the command line's environment ignores it.
 */
export function serverSecretOf(name: string): string | null {
  const upper = name.toUpperCase();
  if (upper.startsWith(WEBHOOK_SECRET_PREFIX)) return "a webhook's signing secret";
  return SERVER_SECRETS.get(upper) ?? null;
}

/** The message for `${name}` in runvil.yaml when it is one of the server's own secrets. */
export function serverSecretProblem(name: string): string | null {
  const what = serverSecretOf(name);
  if (what === null) return null;
  return `\${${name}} is ${what}, one of the server's own secrets: runvil.yaml may not send it anywhere; give the service a secret of its own`;
}
