/**
 * The build a run started on (src/host/run-build.ts, src/config/config-canonical.ts): the same
 * deployment gives the same digests wherever it is computed, a configuration says the same
 * whatever order its file lists things in, and a change to the Lua runtime, the wasmoon
 * release or the configuration changes the build.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalConfig } from '../../src/config/config-canonical.ts';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import type { DeploymentConfig } from '../../src/config/deployment-config.ts';
import {
  buildChangeWords,
  buildWords,
  deploymentBuild,
  ENGINE_VERSION,
  luaDigest,
  luaRuntimeChunks,
  runBuild,
  WASMOON_VERSION,
} from '../../src/host/run-build.ts';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};

function config(text: string): DeploymentConfig {
  const parsed = parseDeploymentConfig(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}

const PACKS = `packs:
  acme/deploy:
    description: Deploys services.
    http:
      url: https://deploy.example/tools
      secret: \${DEPLOY_SECRET}
    trusted: true
    tools:
      - name: start
        description: Starts a deploy.
      - name: status
        description: Reads a deploy's status.
  acme/docs:
    description: Searches the docs.
    mcp:
      url: https://docs.example/mcp
`;

// The same Packs, listed the other way round, each Pack's fields in another order (a list keeps its order: it is the tools' order).
const PACKS_REORDERED = `packs:
  acme/docs:
    mcp:
      url: https://docs.example/mcp
    description: Searches the docs.
  acme/deploy:
    tools:
      - description: Starts a deploy.
        name: start
      - name: status
        description: Reads a deploy's status.
    trusted: true
    http:
      secret: \${DEPLOY_SECRET}
      url: https://deploy.example/tools
    description: Deploys services.
`;

describe('the build of a deployment', () => {
  it('names the Engine of package.json, on the wasmoon release package.json pins', () => {
    expect(ENGINE_VERSION).toBe(packageJson.version);
    expect(WASMOON_VERSION).toBe(packageJson.dependencies.wasmoon);
  });

  it('is the same each time it is computed', async () => {
    const one = await deploymentBuild({ config: canonicalConfig(config(PACKS)) });
    const two = await deploymentBuild({ config: canonicalConfig(config(PACKS)) });
    expect(two).toEqual(one);
    expect(one.engine).toBe(ENGINE_VERSION);
    expect(one.lua).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(one.config).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(one.id).toMatch(/^[0-9a-f]{12}$/);
  });

  it('does not depend on the order the file lists things in', async () => {
    const one = await deploymentBuild({ config: canonicalConfig(config(PACKS)) });
    const two = await deploymentBuild({ config: canonicalConfig(config(PACKS_REORDERED)) });
    expect(two.config).toBe(one.config);
    expect(two.id).toBe(one.id);
  });

  it("does not depend on a trigger's place in the file", async () => {
    const trigger = `triggers:\n  issues:\n    prompt: triage\n    from: github\n    secret: \${GITHUB_SECRET}\n`;
    const one = await deploymentBuild({ config: canonicalConfig(config(trigger)) });
    const two = await deploymentBuild({ config: canonicalConfig(config(`# the triggers\n\n${trigger}`)) });
    expect(two.config).toBe(one.config);
  });

  it('changes with what the configuration says', async () => {
    const one = await deploymentBuild({ config: canonicalConfig(config(PACKS)) });
    const edits = [
      PACKS.replace('Starts a deploy.', 'Starts a deploy now.'),
      PACKS.replace('https://docs.example/mcp', 'https://docs.example/v2/mcp'),
      PACKS.replace('${DEPLOY_SECRET}', '${OTHER_SECRET}'),
      `${PACKS}public_url: https://runvil.example\n`,
    ];
    for (const edit of edits) {
      const two = await deploymentBuild({ config: canonicalConfig(config(edit)) });
      expect(two.config, edit).not.toBe(one.config);
      expect(two.id, edit).not.toBe(one.id);
      expect(two.lua).toBe(one.lua);
    }
  });

  it('changes with any chunk of the Lua runtime, and with the wasmoon release', async () => {
    const chunks = luaRuntimeChunks();
    expect(chunks.length).toBeGreaterThan(1);
    const base = await luaDigest(chunks);
    for (let i = 0; i < chunks.length; i++) {
      const changed = chunks.map((chunk, j) => (j === i ? { ...chunk, source: `${chunk.source}\n-- one more line` } : chunk));
      expect(await luaDigest(changed), chunks[i]!.name).not.toBe(base);
    }
    expect(await luaDigest([...chunks].reverse())).not.toBe(base);
    expect(await luaDigest(chunks, '1.16.1')).not.toBe(base);
    const empty = canonicalConfig(config(''));
    const changedRuntime = await deploymentBuild({
      config: empty,
      lua: [{ ...chunks[0]!, source: chunks[0]!.source.replace('local R = {}', 'local R = {} ') }, ...chunks.slice(1)],
    });
    const runtime = await deploymentBuild({ config: empty });
    expect(changedRuntime.lua).not.toBe(runtime.lua);
    expect(changedRuntime.id).not.toBe(runtime.id);
    expect(changedRuntime.config).toBe(runtime.config);
  });
});

describe('the build of a run', () => {
  it("adds its prompt source's digest and its Packs' tool lists' digests, in pack id order", async () => {
    const deployment = await deploymentBuild({ config: canonicalConfig(config('')) });
    const build = await runBuild(
      deployment,
      '---\nname: x\n---\n# X\n',
      new Map([
        ['docs', 'sha256:bb'],
        ['deploy', 'sha256:aa'],
      ]),
    );
    expect(build).toMatchObject({ id: deployment.id, engine: deployment.engine, lua: deployment.lua, config: deployment.config });
    expect(build.prompt).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(Object.keys(build.packs)).toEqual(['deploy', 'docs']);
    expect(Object.getPrototypeOf(build.packs)).toBeNull();
    expect((await runBuild(deployment, '---\nname: x\n---\n# X \n')).prompt).not.toBe(build.prompt);
  });
});

describe('a build in words', () => {
  it('names the id, the engine and the digests, cut short', async () => {
    const build = await deploymentBuild({ config: canonicalConfig(config('')) });
    const words = buildWords(build);
    expect(words).toBe(`build ${build.id} (engine ${ENGINE_VERSION}, lua ${build.lua.slice(0, 15)}…, config ${build.config.slice(0, 15)}…)`);
    const other = await deploymentBuild({ config: canonicalConfig(config(PACKS)) });
    expect(buildChangeWords(build, other)).toBe(`the run started on ${words} and resumed on ${buildWords(other)}`);
  });
});
