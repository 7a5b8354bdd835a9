/**
 * The fixture Host: what prompt tests and `runvil run --script` run on. It serves the real
 * runvil Packs over fixture pages and search results, third-party Packs described by the
 * test, the scripted model for every role, answers from a list for the operator, and a
 * clock that never moves, so a run needs no network, no model and no person.
 */
import { runvilPacks, SEARCH_PROVIDER_SERVICE, NO_RESULTS, couldNotFetch, type SearchProvider } from '../../packs/index.ts';
import type { ScriptedReply } from '../models/scripted.ts';
import { ScriptedProvider } from '../models/scripted.ts';
import type { HostConfig } from './host.ts';
import { ScriptedOperator } from './operator.ts';
import type { Pack } from './pack.ts';
import { fixturePack, type FixturePackSpec } from './fixture-pack.ts';
import { MemoryCallLedger } from './memory-call-ledger.ts';
import { Recording, type RecordedCall } from './recording.ts';

/** What a fixture Host serves, as a test file's `host:` key describes it. */
export interface FixtureHostSpec {
  /**
   * runvil/web: served from `pages` (web/fetch, by url) and `search` (web/search, by query,
   * `*` answering any other); `{ unavailable }` makes the Pack unavailable with that reason;
   * false leaves it out of the Host.
   */
  web?: false | { unavailable: string } | { pages?: Record<string, string>; search?: Record<string, string> };
  /** false leaves runvil/user-input out of the Host. */
  'user-input'?: false;
  /** Further Packs by fully qualified name. */
  packs?: Record<string, FixturePackSpec>;
}

/** The time `sys.now()` reads on a fixture Host: 2025-01-01T00:00:00Z, in milliseconds. */
export const FIXTURE_NOW = Date.UTC(2025, 0, 1);

/**
 * Builds the fixture Host of one run. `recorded` (a test file's `recorded:`) answers catalog
 * tool calls before the Packs do, chain by chain in call order (recording.ts).
 */
export function fixtureHost(
  spec: FixtureHostSpec,
  answers: readonly string[],
  modelScript: readonly ScriptedReply[],
  recorded: readonly RecordedCall[] = [],
): HostConfig {
  const web = spec.web ?? {};
  const pages = web !== false && 'pages' in web ? (web.pages ?? {}) : {};
  const [webPack, userInputPack, subagentsPack] = runvilPacks({
    fetchPage: async (url) => (Object.hasOwn(pages, url) ? { ok: true, text: pages[url]! } : { ok: false, message: couldNotFetch(url) }),
  }) as [Pack, Pack, Pack];

  const packs: Pack[] = [subagentsPack];
  const services: Record<string, unknown> = {};
  if (web !== false) {
    // Served even when the test makes the Pack unavailable, so the test's reason is the one reported.
    services[SEARCH_PROVIDER_SERVICE] = FIXTURE_SEARCH_PROVIDER;
    if ('unavailable' in web) {
      const reason = web.unavailable;
      packs.push({ ...webPack, unavailableReason: () => reason });
    } else {
      const results = web.search ?? {};
      packs.push(withSearchText(webPack, (query) => (Object.hasOwn(results, query) ? results[query] : results['*']) ?? NO_RESULTS));
    }
  }
  if (spec['user-input'] !== false) packs.push(userInputPack);
  for (const [fqName, packSpec] of Object.entries(spec.packs ?? {})) packs.push(fixturePack(fqName, packSpec));

  const model = new ScriptedProvider(modelScript);
  return {
    packs,
    services,
    models: { provider: () => model },
    operator: new ScriptedOperator(answers),
    clock: () => FIXTURE_NOW,
    calls: new MemoryCallLedger({
      // Nothing posts to it: a `later` fixture tool settles its own call.
      callback: async (callId) => ({ url: `http://fixture.invalid/runs/run-1/tool-results/${callId}`, token: '0'.repeat(64) }),
      clock: () => FIXTURE_NOW,
      // The clock never moves, so a deadline is reached once the results due first are in.
      delay: () => 5,
    }),
    ...(recorded.length > 0 ? { recording: new Recording(recorded) } : {}),
  };
}

/** Stands in for a search API so web/search runs its own checks; its results are replaced below. */
const FIXTURE_SEARCH_PROVIDER: SearchProvider = {
  async search() {
    return { ok: true, results: [] };
  },
};

/**
 * The real web Pack, with web/search answering the test's text for the query verbatim (a
 * test writes the tool's output, not a search API's result records). Calls the real Pack
 * first, so a bad query fails with the Pack's own message.
 */
function withSearchText(pack: Pack, textFor: (query: string) => string): Pack {
  return {
    ...pack,
    async call(tool, args, context) {
      const outcome = await pack.call(tool, args, context);
      if (tool !== 'web/search' || !outcome.ok || typeof args.query !== 'string') return outcome;
      return { ok: true, output: textFor(args.query.trim()) };
    },
  };
}
