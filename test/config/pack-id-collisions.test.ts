/**
 * A configured Pack may not take a Pack id a runvil Pack has (`evil/web` would be `web` in a
 * prompt's `uses:` and in its tool ids, passing for runvil/web), nor one another configured
 * Pack of the file has: refused at the Pack's key, naming both Packs.
 */
import { describe, expect, it } from 'vitest';
import { formatConfigProblem, parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { RUNVIL_PACK_NAMES } from '../../src/config/runvil-pack-names.ts';
import { runvilPacks } from '../../packs/index.ts';

function problems(text: string): string[] {
  const outcome = parseDeploymentConfig(text);
  if (outcome.ok) throw new Error(`the file was accepted:\n${text}`);
  return outcome.problems.map((problem) => formatConfigProblem('runvil.yaml', problem));
}

const mcp = (name: string) => `  ${name}:\n    mcp: { url: https://x/mcp }\n`;
const http = (name: string) => `  ${name}:\n    http: { url: https://x/tools, secret: "\${ACME_SECRET}" }\n    tools: [{ name: fetch }]\n`;

describe("a configured Pack with a runvil Pack's id", () => {
  for (const runvil of RUNVIL_PACK_NAMES) {
    const id = runvil.split('/')[1]!;
    for (const [served, pack] of [
      ['an MCP server', mcp],
      ['an HTTP tool service', http],
    ] as const) {
      it(`refuses evil/${id}, served by ${served}, at its key, naming ${runvil}`, () => {
        expect(problems(`packs:\n${pack(`evil/${id}`)}`)).toEqual([
          `runvil.yaml:2:3: \`packs["evil/${id}"]\`: its Pack id ${id} is ${runvil}'s, a runvil Pack; a configured Pack may not take a Pack id already taken (rename evil/${id}, such as evil/${id}-tools)`,
        ]);
      });
    }
  }

  it('refuses it under any vendor, and in any position of the file', () => {
    for (const vendor of ['acme', 'web', 'openai', 'x-1']) {
      const found = problems(`packs:\n${mcp('acme/demo')}${mcp(`${vendor}/user-input`)}`);
      expect(found).toEqual([expect.stringContaining(`runvil.yaml:4:3: \`packs["${vendor}/user-input"]\`: its Pack id user-input is runvil/user-input's`)]);
    }
  });

  it("refuses it beside the Pack's other problems", () => {
    const found = problems('packs:\n  evil/subagents:\n    mcp: { url: ftp://x }\n');
    expect(found).toHaveLength(2);
    expect(found.join('\n')).toContain("its Pack id subagents is runvil/subagents's");
    expect(found.join('\n')).toContain('must be an http or https URL');
  });

  it("takes Pack ids that only resemble a runvil Pack's", () => {
    for (const name of ['acme/web-tools', 'acme/webs', 'acme/user', 'acme/subagent', 'web/acme', 'runvilish/web-search']) {
      const outcome = parseDeploymentConfig(`packs:\n${mcp(name)}`);
      expect(outcome.ok && [...outcome.config.packs.keys()]).toEqual([name]);
    }
  });
});

describe('two configured Packs with the same Pack id', () => {
  it('refuses the second at its key, naming the first', () => {
    expect(problems(`packs:\n${mcp('acme/deploy')}${http('other/deploy')}`)).toEqual([
      'runvil.yaml:4:3: `packs["other/deploy"]`: its Pack id deploy is acme/deploy\'s, another configured Pack; a configured Pack may not take a Pack id already taken (rename other/deploy, such as other/deploy-tools)',
    ]);
  });
});

describe('the runvil Packs the configuration knows of', () => {
  it('are the Packs of packs/, by fully qualified name', () => {
    expect([...RUNVIL_PACK_NAMES].sort()).toEqual(
      runvilPacks()
        .map((pack) => pack.manifest.fqName)
        .sort(),
    );
  });
});
