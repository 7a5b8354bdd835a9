/**
 * The Brave Search provider: `GET {base}/web/search?q=...&count=N` with the key in the
 * `X-Subscription-Token` header; results come from `web.results[]`, whose titles and
 * descriptions carry HTML highlighting and entities.
 */
import { htmlFragmentToLine } from '../html-text.ts';
import type { SearchProvider, SearchResult } from '../search-provider.ts';
import { requestJson, text, trimBase, type SearchApiOptions } from './request-json.ts';

/** The Brave Search API root. */
export const BRAVE_BASE_URL = 'https://api.search.brave.com/res/v1';

/** The most results Brave answers for one web search. */
const BRAVE_MAX_COUNT = 20;

/** A search provider over the Brave Search API. */
export function braveSearchProvider(options: SearchApiOptions): SearchProvider {
  const base = trimBase(options.baseUrl ?? BRAVE_BASE_URL);
  return {
    async search(query, count, signal) {
      const params = new URLSearchParams({ q: query, count: String(Math.min(Math.max(1, count), BRAVE_MAX_COUNT)) });
      const answer = await requestJson(
        options,
        `${base}/web/search?${params}`,
        { method: 'GET', headers: { accept: 'application/json', 'x-subscription-token': options.apiKey } },
        signal,
      );
      if (!answer.ok) return answer;
      return { ok: true, results: braveResults(answer.json).slice(0, count) };
    },
  };
}

function braveResults(json: unknown): SearchResult[] {
  const web = typeof json === 'object' && json !== null ? (json as { web?: { results?: unknown } }).web : undefined;
  const results = Array.isArray(web?.results) ? (web.results as unknown[]) : [];
  return results
    .map((result) => ({
      title: htmlFragmentToLine(text(result, 'title')),
      url: text(result, 'url'),
      description: htmlFragmentToLine(text(result, 'description')),
    }))
    .filter((result) => result.url !== '');
}
