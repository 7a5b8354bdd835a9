/**
 * Applies the index's migrations (migrations/) to the test D1 database before each test
 * file, as `npm start` does to the local one: fresh-state.ts has just emptied it, the
 * record of applied migrations with it.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

await applyD1Migrations(env.RUNVIL_DB, env.TEST_MIGRATIONS);
