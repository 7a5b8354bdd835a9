/**
 * The Tavily provider: `POST {base}/search` with a JSON body. The key goes both in the body
 * (`api_key`, the original scheme) and as a bearer token (the current one), so old and new
 * deployments accept it. Results come from `results[]`, whose `content` is the snippet.
 */
import type { SearchProvider, SearchResult } from '../search-provider.ts';
import { requestJson, text, trimBase, type SearchApiOptions } from './request-json.ts';

/** The Tavily API root. */
export const TAVILY_BASE_URL = 'https://api.tavily.com';

/** The most results Tavily answers for one search. */
const TAVILY_MAX_COUNT = 20;

/** A search provider over the Tavily search API. */
export function tavilySearchProvider(options: SearchApiOptions): SearchProvider {
  const base = trimBase(options.baseUrl ?? TAVILY_BASE_URL);
  return {
    async search(query, count, signal) {
      const body = {
        api_key: options.apiKey,
        query,
        max_results: Math.min(Math.max(1, count), TAVILY_MAX_COUNT),
        search_depth: 'basic',
        include_answer: false,
        include_raw_content: false,
        include_images: false,
      };
      const answer = await requestJson(
        options,
        `${base}/search`,
        {
          method: 'POST',
          headers: {
            accept: 'application/json',
            'content-type': 'application/json',
            authorization: `Bearer ${options.apiKey}`,
          },
          body: JSON.stringify(body),
        },
        signal,
      );
      if (!answer.ok) return answer;
      return { ok: true, results: tavilyResults(answer.json).slice(0, count) };
    },
  };
}

function tavilyResults(json: unknown): SearchResult[] {
  const results = typeof json === 'object' && json !== null ? (json as { results?: unknown }).results : undefined;
  if (!Array.isArray(results)) return [];
  return results
    .map((result: unknown) => ({
      title: text(result, 'title'),
      url: text(result, 'url'),
      description: text(result, 'content'),
    }))
    .filter((result) => result.url !== '');
}
