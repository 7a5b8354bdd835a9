/**
 * What calling an MCP tool through Runvil costs beside the same calls made with the SDK's
 * client directly, in the same run of this script, against the reference server on
 * loopback: N calls of `echo` from a prompt's Lua (one run: the catalog, the argument
 * check, the journal, the untrusted envelope, the Pack's connection kept for the run's
 * calls) and N `callTool`s on one connected SDK client. Reported per call and as a ratio
 * (goal: at most 1.2x). Run with `npm run bench` (BENCH_SCALE=0.1 for a quick pass).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker-provider.js';
import wasmoon from 'wasmoon';
import { parseDeploymentConfig } from '../src/config/parse-config.ts';
import { LuaPlatform } from '../src/engine/lua/vm.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../src/host/remote/configured-packs.ts';
import { fixtureHost } from '../src/fixture/fixture-host.ts';
import { runOnHost } from '../src/host/host.ts';
import { parsePrompt } from '../src/prompt/index.ts';
import { startEverythingServer } from '../test/support/mcp-server.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const calls = Math.max(20, Math.round(300 * scale));
const rounds = 3;

const server = await startEverythingServer();
try {
  const parsedConfig = parseDeploymentConfig(`packs:\n  everything/demo:\n    mcp: { url: "${server.url}" }\n`);
  if (!parsedConfig.ok) throw new Error('bad config');
  const source = `---\nname: bench\ndescription: Calls echo.\nrunvil: 0\nuses: [everything/demo]\n---\n# Bench\n\n## Call\n\n\`\`\`lua\nlocal n = 0\nfor i = 1, ${calls} do n = n + #tools.call('demo/echo', { message = 'hello ' .. i }) end\nreturn tostring(n)\n\`\`\`\n`;
  const parsed = parsePrompt(source, 'bench.md');
  if (!parsed.ok) throw new Error('bad prompt');
  const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());

  const viaRunvil = async (): Promise<number> => {
    const started = performance.now();
    const snapshots = await snapshotPacks(parsedConfig.config, parsed.prompt, {});
    const base = fixtureHost({}, [], []);
    const outcome = await runOnHost(platform, { ...base, packs: [...base.packs, ...snapshotPacksToPacks(snapshots, {})] }, { prompt: parsed.prompt });
    if (outcome.status !== 'completed') throw new Error(outcome.error.message);
    return performance.now() - started;
  };

  const direct = async (): Promise<number> => {
    const started = performance.now();
    const client = new Client({ name: 'bench', version: '0' }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    let n = 0;
    for (let i = 1; i <= calls; i++) {
      const result = await client.callTool({ name: 'echo', arguments: { message: `hello ${i}` } });
      n += (result.content as { text: string }[])[0]!.text.length;
    }
    await client.close();
    if (n === 0) throw new Error('no output');
    return performance.now() - started;
  };

  // Warm both paths (JIT, the server's first session), then alternate so drift hits both alike.
  await viaRunvil();
  await direct();
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    ours.push(await viaRunvil());
    theirs.push(await direct());
  }
  const best = (values: number[]) => Math.min(...values);
  const perCall = (ms: number) => (ms / calls).toFixed(3);
  console.log(`M1 MCP echo x${calls}, best of ${rounds}`);
  console.log(`  through Runvil (a run's Lua):  ${perCall(best(ours))} ms/call`);
  console.log(`  SDK client directly:           ${perCall(best(theirs))} ms/call`);
  console.log(`  ratio: ${(best(ours) / best(theirs)).toFixed(2)}x (goal: at most 1.2x)`);
} finally {
  await server.stop();
}
