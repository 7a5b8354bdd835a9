/**
 * What `runvil run` says to do about a declared Pack it cannot serve, under that Pack's
 * line of the requirements notice: the variables that configure web search, the
 * runvil.yaml (or `--config` file) that installs another vendor's Pack, or the script's
 * `host:` that describes one.
 */
import { BRAVE_SEARCH_API_KEY, SEARCH_PROVIDER_SERVICE, TAVILY_API_KEY } from '../../packs/index.ts';
import type { Remedies } from '../host/catalog.ts';

/** Where the run's Packs come from: runvil.yaml (the file read, or null for none), or a script's `host:`. */
export type PackSource = { kind: 'config'; file: string | null; runvilPacks: readonly string[] } | { kind: 'script'; file: string };

/** The remedies of the command line's Hosts. */
export function commandLineRemedies(source: PackSource): Remedies {
  return {
    service(service) {
      if (service !== SEARCH_PROVIDER_SERVICE) return undefined;
      return `set ${BRAVE_SEARCH_API_KEY} (Brave Search) or ${TAVILY_API_KEY} (Tavily) in the environment, or run with --script FILE, whose host: web: answers web/search offline`;
    },
    pack(fqName) {
      if (source.kind === 'script')
        return `the --script file ${source.file} describes its Packs under host: packs: (by fully qualified name); add ${fqName} there`;
      const [vendor, id] = fqName.split('/') as [string, string];
      if (vendor === 'runvil') {
        return `runvil's own Packs are ${source.runvilPacks.join(', ')}; to use another vendor's Pack, write vendor/${id} under uses: and configure it under packs: in ./runvil.yaml or in the file --config FILE names`;
      }
      return source.file === null
        ? `to install it, configure ${fqName} under packs: in ./runvil.yaml or in the file --config FILE names (no runvil.yaml was read)`
        : `to install it, configure ${fqName} under packs: in ${source.file} (it has no such Pack), or name another runvil.yaml with --config FILE`;
    },
  };
}
