/**
 * The `runvil/search-provider` service: what web/search asks for results, and how the
 * results read as the tool's text. A Host provides one (Brave, Tavily, or its own).
 */

/** One web search result. */
export interface SearchResult {
  title: string;
  url: string;
  description: string;
}

/** What a search answers: its results, or a model-safe failure text starting `web_search: `. */
export type SearchOutcome = { ok: true; results: SearchResult[] } | { ok: false; message: string };

/** The service web/search reads from `context.services` under `runvil/search-provider`. */
export interface SearchProvider {
  search(query: string, count: number, signal?: AbortSignal): Promise<SearchOutcome>;
}

/** The text web/search answers when a search finds nothing. */
export const NO_RESULTS = 'no results';

/** Results as numbered text: `1. Title`, then the url and the description indented below. */
export function formatResults(results: readonly SearchResult[]): string {
  if (results.length === 0) return NO_RESULTS;
  return results
    .map((result, index) => {
      const lines = [`${index + 1}. ${oneLine(result.title) || oneLine(result.url)}`, `   ${oneLine(result.url)}`];
      const description = oneLine(result.description);
      if (description !== '') lines.push(`   ${description}`);
      return lines.join('\n');
    })
    .join('\n\n');
}

// A field that holds a line break would break the numbered layout the model reads.
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
