/**
 * wasmoon in the Worker bundle as deployed (test/worker/bundle/entry.ts, built by wrangler
 * with wrangler.toml's rules and alias), reached through the LUA_BUNDLE service binding.
 */
// @ts-ignore -- the module's types come with @cloudflare/workers-types, not in tsconfig's types
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { BundleAnswer } from './bundle/entry.ts';

const bundle = (env as { LUA_BUNDLE: { fetch(url: string, init: RequestInit): Promise<Response> } })
  .LUA_BUNDLE;

async function run(source: string): Promise<BundleAnswer> {
  const response = await bundle.fetch('https://bundle.test/', { method: 'POST', body: source });
  return (await response.json()) as BundleAnswer;
}

describe('the deployed Worker bundle', () => {
  it('creates the factory on the first request, without nodejs_compat', async () => {
    const answer = await run('return 1 + 2 * 3, ("lua"):upper()');
    console.log(
      `[timing] bundle, first request: factory ${answer.factoryMs} ms, engine ${answer.engineMs} ms`,
    );
    expect(answer).toMatchObject({ values: [7, 'LUA'], hasProcess: false });
  });

  it('gives the same math.random values as Node after math.randomseed', async () => {
    // Measured in Node 20 with wasmoon 1.16.0, as in lua-in-workerd.test.ts.
    const answer = await run('math.randomseed(42); return math.random(1, 1000), math.random(1, 1000)');
    expect(answer.values).toEqual([742, 50]);
  });

  it('stops an endless loop with a count hook that raises', async () => {
    const answer = await run("debug.sethook(function() error('budget exceeded') end, '', 1000); while true do end");
    expect(answer.error).toMatch(/budget exceeded$/);
  });

  it('answers concurrent requests from the one factory of the isolate', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => run(`return ${i}`)));
    expect(answers.map((answer) => [answer.values, answer.sameFactory])).toEqual(
      answers.map((_, i) => [[i], true]),
    );
    const last = answers.at(-1);
    console.log(`[timing] bundle, later request: factory ${last?.factoryMs} ms, engine ${last?.engineMs} ms`);
  });
});
