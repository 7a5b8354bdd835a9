/**
 * The manifest of runvil/web: what the run's catalog shows of the fetch and search tools.
 * Both tools answer plain, untrusted text, so the run wraps their output in the envelope.
 */
import type { PackManifest } from '../../src/host/pack.ts';

/** The service web/search reads its results from; without it the whole Pack cannot serve. */
export const SEARCH_PROVIDER_SERVICE = 'runvil/search-provider';

/** Why runvil/web cannot serve on a Host with no search provider (the chapter's text). */
export const WEB_UNAVAILABLE = `web needs ${SEARCH_PROVIDER_SERVICE}, and this host provides none`;

/** The most results one web/search call asks for. */
export const MAX_SEARCH_COUNT = 20;

/** The number of results web/search asks for when the call names no count. */
export const DEFAULT_SEARCH_COUNT = 5;

/** The manifest of runvil/web. */
export const WEB_MANIFEST: PackManifest = {
  fqName: 'runvil/web',
  description: 'Search the web and fetch pages',
  services: [SEARCH_PROVIDER_SERVICE],
  tools: [
    {
      id: 'web/fetch',
      description: 'Fetch a web page over http or https and return its readable text.',
      parameters: {
        type: 'object',
        properties: {
          url: { type: 'string', description: 'The http or https URL of the page to fetch.' },
        },
        required: ['url'],
      },
      output: 'plain',
      trusted: false,
    },
    {
      id: 'web/search',
      description: 'Search the web and return a list of results (title, url, description).',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'What to search for.' },
          count: {
            type: 'integer',
            description: `How many results to return (1 to ${MAX_SEARCH_COUNT}, default ${DEFAULT_SEARCH_COUNT}).`,
            minimum: 1,
            maximum: MAX_SEARCH_COUNT,
          },
        },
        required: ['query'],
      },
      output: 'plain',
      trusted: false,
    },
  ],
};
