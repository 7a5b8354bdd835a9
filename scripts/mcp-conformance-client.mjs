#!/usr/bin/env node
/**
 * The client under test in the MCP conformance suite's client scenarios
 * (`conformance client --command "node scripts/mcp-conformance-client.mjs" --scenario NAME`,
 * which runs this command with the scenario server's URL as its last argument and the
 * scenario's name in MCP_CONFORMANCE_SCENARIO): Runvil's MCP Pack, as a run of `runvil run`
 * uses it. It writes a runvil.yaml that names the URL as the Pack `conformance/server` and
 * runs the scenario's prompt of test/mcp-conformance/client/ (each declares the Pack and
 * calls the tool the scenario serves).
 *
 * A question the server asks (elicitation) becomes an operator ask of the run, answered as a
 * person at the terminal answers a form by pressing Enter on each field: each takes its
 * default. The run has a terminal of its own for that (a pseudo-terminal from util-linux's
 * `script`), whose every line is empty. Exits with the run's status.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const prompt = join(root, 'test/mcp-conformance/client', `${scenario}.md`);

if (!url || !/^https?:\/\//.test(url) || !/^[a-z0-9_/-]+$/i.test(scenario) || !existsSync(prompt)) {
  console.error(
    `mcp-conformance-client: usage: MCP_CONFORMANCE_SCENARIO=NAME mcp-conformance-client.mjs URL, with a prompt test/mcp-conformance/client/NAME.md (got ${JSON.stringify(scenario)}, ${JSON.stringify(url)})`,
  );
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'runvil-conformance-client-'));
const config = join(dir, 'runvil.yaml');
writeFileSync(config, `packs:\n  conformance/server:\n    description: The conformance scenario's server\n    mcp:\n      url: ${JSON.stringify(url)}\n`);

const quote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;
const command = [process.execPath, join(root, 'bin/runvil.mjs'), 'run', prompt, '--config', config, '--quiet'].map(quote).join(' ');
// `script` gives the run a terminal; its input is empty lines (Enter on each field), its output this process's.
const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], { stdio: ['pipe', 'inherit', 'inherit'] });
const enter = setInterval(() => child.stdin.write('\n'), 100);
child.stdin.on('error', () => {});
child.on('close', (code) => {
  clearInterval(enter);
  rmSync(dir, { recursive: true, force: true });
  process.exitCode = code ?? 1;
});
