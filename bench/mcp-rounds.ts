/**
 * What an `input_required` round trip (MCP 2026-07-28) costs through Runvil beside the same
 * rounds through the SDK's v2 client alone, in the same run of this script, against the
 * 2026-07-28 test server on loopback (test/support/modern-mcp-server.mjs): N calls of
 * `asks-twice` (the call, then two rounds: each an elicitation answered and a retry with the
 * request state) from a prompt's Lua, each elicitation a form ask answered at once by a
 * scripted operator, each round kept with the call before it is asked (call-rounds.ts); and
 * N calls on one SDK client whose elicitation handler answers at once (its auto-fulfilment).
 * Reported per round trip and as a ratio. Run with `npm run bench` (BENCH_SCALE=0.1 for a
 * quick pass).
 */
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/client/validators/cf-worker';
import wasmoon from 'wasmoon';
import { parseDeploymentConfig } from '../src/config/parse-config.ts';
import { LuaPlatform } from '../src/engine/lua/vm.ts';
import { ScriptedOperator } from '../src/host/operator.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../src/host/remote/configured-packs.ts';
import { fixtureHost } from '../src/fixture/fixture-host.ts';
import { runOnHost } from '../src/host/host.ts';
import type { Json } from '../src/json/json.ts';
import { parsePrompt } from '../src/prompt/index.ts';
import { startModernMcpServer } from '../test/support/modern-mcp.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const calls = Math.max(10, Math.round(100 * scale));
const passes = 3;
/** Each call of asks-twice is two round trips. */
const ROUNDS_PER_CALL = 2;

const server = await startModernMcpServer();
try {
  const parsedConfig = parseDeploymentConfig(`packs:\n  acme/modern:\n    mcp: { url: "${server.url}" }\n`);
  if (!parsedConfig.ok) throw new Error('bad config');
  const lua = `local n = 0\nfor i = 1, ${calls} do n = n + #tools.call('modern/asks-twice', {}) end\nreturn tostring(n)`;
  const source = `---\nname: bench\ndescription: Calls asks-twice.\nrunvil: 0\nuses: [acme/modern]\n---\n# Bench\n\n## Call\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;
  const parsed = parsePrompt(source, 'bench.md');
  if (!parsed.ok) throw new Error('bad prompt');
  const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());
  const answers: Json[] = [];
  for (let i = 0; i < calls; i++) answers.push({ name: 'Ada' }, { colour: 'green' });

  const viaRunvil = async (): Promise<number> => {
    const started = performance.now();
    const snapshots = await snapshotPacks(parsedConfig.config, parsed.prompt, {});
    const base = fixtureHost({}, [], []);
    const operator = new ScriptedOperator(answers);
    const outcome = await runOnHost(platform, { ...base, operator, packs: [...base.packs, ...snapshotPacksToPacks(snapshots, {})] }, { prompt: parsed.prompt });
    if (outcome.status !== 'completed') throw new Error(outcome.error.message);
    if (operator.refused.length > 0) throw new Error(operator.refused[0]!.message);
    return performance.now() - started;
  };

  const direct = async (): Promise<number> => {
    const started = performance.now();
    const client = new Client(
      { name: 'bench', version: '0' },
      { capabilities: { elicitation: { form: {} } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator(), versionNegotiation: { mode: 'auto' } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      const schema = (request.params as { requestedSchema?: { properties?: object } }).requestedSchema;
      const content: Record<string, string> = schema?.properties && 'colour' in schema.properties ? { colour: 'green' } : { name: 'Ada' };
      return { action: 'accept' as const, content };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    let n = 0;
    for (let i = 1; i <= calls; i++) {
      const result = await client.callTool({ name: 'asks-twice', arguments: {} });
      const text = (result.content as { text: string }[])[0]!.text;
      if (text !== 'Ada likes green') throw new Error(`the SDK's rounds ended with ${text}`);
      n += text.length;
    }
    await client.close();
    if (n === 0) throw new Error('no output');
    return performance.now() - started;
  };

  // Warm both paths (JIT, the server's first requests), then alternate so drift hits both alike.
  await viaRunvil();
  await direct();
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    ours.push(await viaRunvil());
    theirs.push(await direct());
  }
  const best = (values: number[]) => Math.min(...values);
  const perRound = (ms: number) => (ms / (calls * ROUNDS_PER_CALL)).toFixed(3);
  console.log(`M2 MCP input_required round trips x${calls * ROUNDS_PER_CALL} (${calls} calls of two rounds), best of ${passes}`);
  console.log(`  through Runvil (a run's Lua, form asks, rounds kept):  ${perRound(best(ours))} ms/round`);
  console.log(`  SDK client alone (auto-fulfilment):                    ${perRound(best(theirs))} ms/round`);
  console.log(`  ratio: ${(best(ours) / best(theirs)).toFixed(2)}x`);
} finally {
  await server.stop();
}
