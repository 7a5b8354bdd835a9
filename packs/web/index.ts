/**
 * runvil/web: `web/fetch` reads a page as text, `web/search` asks the Host's
 * `runvil/search-provider` service. The Pack cannot serve without a search provider, so a
 * Host with none leaves it out (and refuses a prompt that declares it).
 */
import type { Json } from '../../src/json/json.ts';
import type { Pack, ServiceDirectory, ToolContext, ToolOutcome } from '../../src/host/pack.ts';
import { createPageFetcher, couldNotFetch, type PageFetcher } from './fetch-page.ts';
import { DEFAULT_SEARCH_COUNT, MAX_SEARCH_COUNT, SEARCH_PROVIDER_SERVICE, WEB_MANIFEST, WEB_UNAVAILABLE } from './manifest.ts';
import { formatResults, type SearchProvider } from './search-provider.ts';

/** web/fetch's failure when the call has no url string (the chapter's text). */
export const MISSING_URL = 'web_fetch: missing url argument';

/** web/search's failure when the call has no query string. */
export const MISSING_QUERY = 'web_search: missing query argument';

/** How runvil/web is built: a Host or a test fixture may replace the page fetcher. */
export interface WebPackOptions {
  /** Fetches pages for web/fetch; its failure texts reach the model as they are. */
  fetchPage?: PageFetcher;
}

/** Builds runvil/web. */
export function webPack(options: WebPackOptions = {}): Pack {
  const fetchPage = options.fetchPage ?? createPageFetcher();
  return {
    manifest: WEB_MANIFEST,
    unavailableReason: (services: ServiceDirectory) => (services.get(SEARCH_PROVIDER_SERVICE) === undefined ? WEB_UNAVAILABLE : null),
    async call(tool, args, context) {
      switch (tool) {
        case 'web/fetch':
          return fetchTool(fetchPage, args, context);
        case 'web/search':
          return searchTool(args, context);
        default:
          return { ok: false, message: `${tool}: runvil/web has no such tool` };
      }
    },
  };
}

async function fetchTool(fetchPage: PageFetcher, args: { [key: string]: Json }, context: ToolContext): Promise<ToolOutcome> {
  const url = args.url;
  if (typeof url !== 'string' || url.trim() === '') return { ok: false, message: MISSING_URL };
  try {
    const page = await fetchPage(url.trim(), context.signal);
    return page.ok ? { ok: true, output: page.text } : page;
  } catch {
    return { ok: false, message: couldNotFetch(url.trim()) };
  }
}

async function searchTool(args: { [key: string]: Json }, context: ToolContext): Promise<ToolOutcome> {
  const query = args.query;
  if (typeof query !== 'string' || query.trim() === '') return { ok: false, message: MISSING_QUERY };
  const count = args.count ?? DEFAULT_SEARCH_COUNT;
  if (typeof count !== 'number' || !Number.isInteger(count)) {
    return { ok: false, message: `web_search: count must be a whole number from 1 to ${MAX_SEARCH_COUNT}` };
  }
  const provider = context.services.get<SearchProvider>(SEARCH_PROVIDER_SERVICE);
  if (provider === undefined) return { ok: false, message: `web_search: ${WEB_UNAVAILABLE}` };
  try {
    const found = await provider.search(query.trim(), Math.min(Math.max(count, 1), MAX_SEARCH_COUNT), context.signal);
    return found.ok ? { ok: true, output: formatResults(found.results) } : found;
  } catch {
    return { ok: false, message: 'web_search: the search failed' };
  }
}

export { WEB_MANIFEST, SEARCH_PROVIDER_SERVICE, WEB_UNAVAILABLE, DEFAULT_SEARCH_COUNT, MAX_SEARCH_COUNT } from './manifest.ts';
export {
  createPageFetcher,
  couldNotFetch,
  DEFAULT_FETCH_MAX_BYTES,
  DEFAULT_FETCH_TIMEOUT_MS,
  type PageFetcher,
  type PageFetcherOptions,
  type PageOutcome,
} from './fetch-page.ts';
export { formatResults, NO_RESULTS, type SearchOutcome, type SearchProvider, type SearchResult } from './search-provider.ts';
export { htmlToReadableText } from './html-text.ts';
export * from './providers/index.ts';
