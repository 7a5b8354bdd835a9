/**
 * A Worker that runs the Lua chunk it is sent, built the way `wrangler deploy` builds
 * Runvil: esbuild with wrangler.toml's rules and alias, no nodejs_compat. The workers
 * pool runs its tests through Vite with nodejs_compat, where wasmoon loads as CommonJS
 * with a working `require`; lua-in-bundle.test.ts sends chunks here to check the shape
 * that is deployed. `npm run test:workers` builds it into .wrangler/test-bundle/.
 */
import { createWorkerdLuaFactory } from '../../../src/worker/lua-factory.ts';
import glue from 'wasmoon/dist/glue.wasm';
import { LuaReturn, type LuaFactory } from 'wasmoon';

let firstFactory: LuaFactory | undefined;

/** What the Worker answers: the chunk's values or error, and what it cost. */
export interface BundleAnswer {
  values?: unknown[];
  error?: string;
  /** Milliseconds to get the factory (created by the first request, cached after). */
  factoryMs: number;
  engineMs: number;
  /** Whether this request got the factory the isolate's first request got. */
  sameFactory: boolean;
  hasProcess: boolean;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const source = await request.text();
    const start = performance.now();
    const factory = await createWorkerdLuaFactory(glue);
    const created = performance.now();
    firstFactory ??= factory;
    const engine = await factory.createEngine({ traceAllocations: true });
    const answer: BundleAnswer = {
      factoryMs: created - start,
      engineMs: performance.now() - created,
      sameFactory: factory === firstFactory,
      hasProcess: typeof process !== 'undefined',
    };
    try {
      const thread = engine.global.newThread();
      thread.loadString(source);
      const { result, resultCount } = thread.resume(0);
      if (result === LuaReturn.Ok) {
        const top = thread.getTop();
        answer.values = Array.from({ length: resultCount }, (_, i) =>
          thread.getValue(top - resultCount + 1 + i),
        );
      } else {
        answer.error = thread.indexToString(-1);
      }
    } finally {
      engine.global.close();
    }
    return Response.json(answer);
  },
};
