/**
 * The bundled search providers, and the choice of one from the Host's environment.
 */
import type { SearchProvider } from '../search-provider.ts';
import { braveSearchProvider } from './brave.ts';
import { tavilySearchProvider } from './tavily.ts';

export { braveSearchProvider, BRAVE_BASE_URL } from './brave.ts';
export { tavilySearchProvider, TAVILY_BASE_URL } from './tavily.ts';
export { DEFAULT_SEARCH_TIMEOUT_MS, type SearchApiOptions } from './request-json.ts';

/** The environment variable that selects Brave Search (checked first). */
export const BRAVE_SEARCH_API_KEY = 'BRAVE_SEARCH_API_KEY';

/** The environment variable that selects Tavily. */
export const TAVILY_API_KEY = 'TAVILY_API_KEY';

/** The search provider the environment configures: Brave, else Tavily, else none. */
export function searchProviderFromEnv(env: Record<string, string | undefined>): SearchProvider | undefined {
  const read = (name: string) => (Object.hasOwn(env, name) ? env[name]?.trim() : undefined);
  const brave = read(BRAVE_SEARCH_API_KEY);
  if (brave) return braveSearchProvider({ apiKey: brave });
  const tavily = read(TAVILY_API_KEY);
  if (tavily) return tavilySearchProvider({ apiKey: tavily });
  return undefined;
}
