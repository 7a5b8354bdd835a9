/**
 * A Worker that runs the Lua chunk it is sent, built the way `wrangler deploy` builds
 * Runvil: esbuild with wrangler.toml's rules and alias, no nodejs_compat. The workers
 * pool runs its tests through Vite with nodejs_compat, where wasmoon loads as CommonJS
 * with a working `require`; lua-in-bundle.test.ts sends chunks here to check the shape
 * that is deployed. `npm run test:workers` builds it into .wrangler/test-bundle/.
 *
 * It also runs the Engine scenarios of ../engine-scenario.ts on the isolate's LuaPlatform
 * (src/worker/workerd-lua/lua-platform.ts, the one the run objects use): GET /engine/platform answers
 * whether it calls the wasm exports directly; GET /engine/tour, /engine/loop and
 * /engine/trios?count=N answer their summaries, and GET /engine/fanout?items=N&name=fanout|calls the fanout measurement of
 * bench/worker-fanout.ts (tasks-fanout.test.ts).
 */
import { createWorkerdLuaFactory } from '../../../src/worker/workerd-lua/lua-factory.ts'; // first: src/worker/workerd-lua/README.md
import glue from 'wasmoon/dist/glue.wasm';
import { LuaReturn, type LuaFactory } from 'wasmoon';
import { isolatePlatform } from '../../../src/worker/workerd-lua/lua-platform.ts';
import { runLoop, runTour, runTrios } from '../engine-scenario.ts';
import { measureFanout } from '../../../bench/worker-fanout.ts';

// wrangler.toml binds the run and MCP session Durable Objects, so the bundle built with it must export the classes.
export { RunObject } from '../../../src/worker/run-object/run-object.ts';
export { McpSession } from '../../../src/worker/mcp/mcp-session.ts';

let firstFactory: LuaFactory | undefined;

/** Answers an Engine scenario's summary, or the error that broke it (with its stack). */
async function runScenario(url: URL): Promise<Response> {
  try {
    const lua = await isolatePlatform();
    switch (url.pathname) {
      case '/engine/platform':
        return Response.json({ direct: lua.direct });
      case '/engine/tour':
        return Response.json(await runTour(lua));
      case '/engine/loop':
        return Response.json(await runLoop(lua));
      case '/engine/trios':
        return Response.json(await runTrios(lua, Number(url.searchParams.get('count') ?? '1')));
      case '/engine/fanout':
        return Response.json(
          await measureFanout(lua, url.searchParams.get('name') === 'calls' ? 'calls' : 'fanout', Number(url.searchParams.get('items') ?? '1000')),
        );
      default:
        return new Response(`no scenario at ${url.pathname}`, { status: 404 });
    }
  } catch (error) {
    const text = error instanceof Error ? `${error.stack ?? error.message}` : String(error);
    return new Response(text, { status: 500 });
  }
}

/** What the Worker answers: the chunk's values or error, and where its factory came from. */
export interface BundleAnswer {
  values?: unknown[];
  error?: string;
  /** Whether this request got the factory the isolate's first request got. */
  sameFactory: boolean;
  hasProcess: boolean;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/engine/')) return runScenario(url);
    const source = await request.text();
    const factory = await createWorkerdLuaFactory(glue);
    firstFactory ??= factory;
    const engine = await factory.createEngine({ traceAllocations: true });
    const answer: BundleAnswer = {
      sameFactory: factory === firstFactory,
      hasProcess: typeof process !== 'undefined',
    };
    try {
      const thread = engine.global.newThread();
      thread.loadString(source);
      const { result, resultCount } = thread.resume(0);
      if (result === LuaReturn.Ok) {
        const top = thread.getTop();
        answer.values = Array.from({ length: resultCount }, (_, i) => thread.getValue(top - resultCount + 1 + i));
      } else {
        answer.error = thread.indexToString(-1);
      }
    } finally {
      engine.global.close();
    }
    return Response.json(answer);
  },
};
