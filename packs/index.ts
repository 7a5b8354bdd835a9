/**
 * The runvil Packs, as a Host's bundled Plugin adds them: runvil/web, runvil/user-input and
 * runvil/subagents.
 */
import type { Pack } from '../src/host/pack.ts';
import { subagentsPack } from './subagents/index.ts';
import { userInputPack } from './user-input/index.ts';
import { webPack, type WebPackOptions } from './web/index.ts';

/** The three runvil Packs; `fetchPage` replaces web/fetch's page fetcher (fixtures, tests). */
export function runvilPacks(options: WebPackOptions = {}): Pack[] {
  return [webPack(options), userInputPack(), subagentsPack()];
}

export * from './web/index.ts';
export * from './user-input/index.ts';
export * from './subagents/index.ts';
