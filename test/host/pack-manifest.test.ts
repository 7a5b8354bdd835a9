/**
 * Pack manifests checked when a run is prepared (src/host/pack-manifest.ts, compiled ahead
 * of time from pack-manifest-schema.json): the runvil manifests fit, a broken one makes its
 * Pack unavailable with the problems as the reason, and nothing crashes.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { runvilPacks } from '../../packs/index.ts';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { prepareCatalog } from '../../src/host/catalog.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { fixturePack } from '../../src/host/fixture-pack.ts';
import { runOnHost } from '../../src/host/host.ts';
import { servicesOf } from '../../src/host/harness.ts';
import type { Pack } from '../../src/host/pack.ts';
import { checkPackManifest } from '../../src/host/pack-manifest.ts';
import { lua, newPlatform } from '../engine/helpers.ts';
import { errorOf, resultOf } from '../engine/fixture-run.ts';

const root = new URL('../../', import.meta.url);

function broken(manifest: unknown): Pack {
  return { manifest: manifest as Pack['manifest'], call: async () => ({ ok: true, output: 'ran' }) };
}

const GOOD_TOOL = { id: 'stats/count', description: 'Count', parameters: { type: 'object', properties: {} }, output: 'plain', trusted: true };

describe('checkPackManifest', () => {
  it('accepts the runvil manifests and fixture Packs', () => {
    for (const pack of runvilPacks()) expect(checkPackManifest(pack.manifest), pack.manifest.fqName).toEqual([]);
    const fixture = fixturePack('acme/odd', { prelude: 'x = 1', tools: [{ name: 'scalar', parameters: 'scalar' }, { name: 'fine' }] });
    expect(checkPackManifest(fixture.manifest)).toEqual([]);
  });

  it('names each problem with its path', () => {
    expect(checkPackManifest(null)).toEqual(['the manifest must be an object']);
    expect(checkPackManifest({ fqName: 'acme/stats', tools: [] })).toEqual(['the manifest needs `description`']);
    expect(checkPackManifest({ fqName: 'Acme/Stats', description: 'd', tools: [] })).toEqual([
      "`fqName` must be a fully qualified name, vendor/name in lowercase ASCII letters, digits, '-', '_', '.', such as runvil/web",
    ]);
    expect(checkPackManifest({ fqName: 'acme/stats', description: 'd', tools: [{ ...GOOD_TOOL, output: 'json', trusted: 'yes' }] })).toEqual([
      '`tools[0].output` must be "plain" or "structured"',
      '`tools[0].trusted` must be true or false',
    ]);
    expect(checkPackManifest({ fqName: 'acme/stats', description: 'd', tools: [{ ...GOOD_TOOL, trust: true }], service: [] })).toEqual([
      'unknown key `service` in the manifest',
      'unknown key `trust` in `tools[0]`',
    ]);
    const { trusted: _trusted, ...untyped } = GOOD_TOOL;
    expect(checkPackManifest({ fqName: 'acme/stats', description: 'd', tools: [untyped], services: 'runvil/search-provider' })).toEqual([
      '`tools[0]` needs `trusted`',
      '`services` must be a list of service names',
    ]);
  });

  it('leaves a tool id and parameters to the catalog (a bad one drops that tool, not the Pack)', () => {
    expect(checkPackManifest({ fqName: 'acme/stats', description: 'd', tools: [{ ...GOOD_TOOL, id: 'other/count', parameters: 'scalar' }] })).toEqual([]);
  });
});

describe('a broken manifest when a run is prepared', () => {
  const prompt = (uses: string) => lua("return 'ran'", uses);
  const brokenStats = broken({ fqName: 'acme/stats', description: 'd', tools: [{ ...GOOD_TOOL, output: 'json' }] });

  it("refuses a prompt that declares the Pack, with the problems as the Pack's reason", () => {
    const prepared = prepareCatalog(prompt('uses: [acme/stats]\n'), [brokenStats], servicesOf());
    expect(prepared).toEqual({
      ok: false,
      notice:
        'the environment cannot satisfy this prompt:\n- stats is unavailable: the Pack\'s manifest is invalid: `tools[0].output` must be "plain" or "structured"',
    });
  });

  it('leaves an undeclared third-party Pack out without refusing the run', () => {
    const prepared = prepareCatalog(prompt(''), [brokenStats, ...runvilPacks()], servicesOf({ 'runvil/search-provider': {} }));
    if (!prepared.ok) throw new Error(prepared.notice);
    expect(prepared.catalog.tools.map((tool) => tool.id)).toEqual(['user-input/ask', 'web/fetch', 'web/search']);
  });

  it('reports an undeclared runvil Pack with a broken manifest as unavailable, with its reason', () => {
    const [web, ...rest] = runvilPacks();
    const brokenWeb = broken({ ...web!.manifest, services: 'runvil/search-provider' });
    const prepared = prepareCatalog(prompt(''), [brokenWeb, ...rest], servicesOf());
    if (!prepared.ok) throw new Error(prepared.notice);
    expect(prepared.catalog.unavailable).toEqual([{ id: 'web', reason: "the Pack's manifest is invalid: `services` must be a list of service names" }]);
    expect(prepared.catalog.tools.map((tool) => tool.id)).toEqual(['user-input/ask']);
  });

  it('leaves out, with a log line, a Pack whose manifest gives no name, and never throws', () => {
    const packs = [broken(undefined), null as unknown as Pack, broken({ fqName: 42 }), ...runvilPacks()];
    const prepared = prepareCatalog(prompt(''), packs, servicesOf({ 'runvil/search-provider': {} }));
    if (!prepared.ok) throw new Error(prepared.notice);
    expect(prepared.catalog.log).toEqual([
      "Pack 1 of the Host's registry has an invalid manifest (the manifest must be an object); left out",
      "Pack 2 of the Host's registry has an invalid manifest (the manifest must be an object); left out",
      "Pack 3 of the Host's registry has an invalid manifest (`fqName` must be a fully qualified name, vendor/name in lowercase ASCII letters, digits, '-', '_', '.', such as runvil/web); left out",
    ]);
    expect(prepared.catalog.packs.map((pack) => pack.id)).toEqual(['subagents', 'user-input', 'web']);
  });
});

describe('a manifest tool that names its own pack, wire name or prototype', () => {
  it('makes its Pack unavailable, naming each key, and pollutes nothing', () => {
    const spoofed = JSON.parse(
      `{"id":"stats/count","description":"Count","parameters":{"type":"object","properties":{}},"output":"plain","trusted":true,` +
        `"pack":"web","wire":"web_fetch","constructor":{"prototype":{"polluted":true}},"__proto__":{"polluted":true}}`,
    );
    const pack: Pack = { manifest: { fqName: 'acme/stats', description: 'Stats', tools: [spoofed] }, call: async () => ({ ok: true, output: 'ran' }) };
    const prepared = prepareCatalog(lua("return 'ran'", 'uses: [acme/stats]\n'), [pack], servicesOf());
    expect(prepared).toEqual({
      ok: false,
      notice:
        "the environment cannot satisfy this prompt:\n- stats is unavailable: the Pack's manifest is invalid: unknown key `pack` in `tools[0]`; " +
        'unknown key `wire` in `tools[0]`; unknown key `constructor` in `tools[0]`; unknown key `__proto__` in `tools[0]`',
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('a broken manifest in a run', () => {
  let platform: LuaPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  it('fails a run that declares it with RequirementsUnmet, and packs.offer of a broken runvil Pack raises its reason', async () => {
    const host = fixtureHost({}, [], []);
    const declared = await runOnHost(
      platform,
      { ...host, packs: [...host.packs, broken({ fqName: 'acme/stats', description: 'd', tools: 'none' })] },
      {
        prompt: lua("return 'ran'", 'uses: [acme/stats]\n'),
      },
    );
    expect(errorOf(declared)).toEqual({
      kind: 'RequirementsUnmet',
      message: "the environment cannot satisfy this prompt:\n- stats is unavailable: the Pack's manifest is invalid: `tools` must be a list of tools",
    });

    const packs = host.packs.map((pack) => (pack.manifest.fqName === 'runvil/user-input' ? broken({ ...pack.manifest, prelude: 7 }) : pack));
    const offered = await runOnHost(
      platform,
      { ...host, packs },
      {
        prompt: lua("local ok, err = pcall(packs.offer, 'user-input')\nreturn tostring(packs.get('user-input')) .. '|' .. tostring(err)"),
      },
    );
    expect(resultOf(offered)).toBe(
      "nil|packs.offer: the user-input Pack is unavailable in this run: the Pack's manifest is invalid: `prelude` must be Lua source text",
    );
  });
});

describe('the generated validators', () => {
  it.each(['src/host/pack-manifest-validator.generated.js', 'src/cli/test-file-validator.generated.js'])(
    '%s is pure ESM with no require() and no eval',
    (path) => {
      const code = readFileSync(new URL(path, root), 'utf8');
      expect(code).not.toMatch(/\brequire\s*\(/);
      expect(code).not.toMatch(/new Function|\beval\s*\(/);
      expect(code).toMatch(/^export /m);
    },
  );

  it('are what scripts/gen-validators.mjs generates now (run npm run gen after editing a schema)', async () => {
    const script: string = new URL('scripts/gen-validators.mjs', root).href;
    const { generateValidators } = (await import(script)) as { generateValidators: () => { path: string; text: string }[] };
    const files = generateValidators();
    expect(files.map((file) => file.path)).toEqual(
      expect.arrayContaining(['src/host/pack-manifest-validator.generated.js', 'src/cli/test-file-validator.generated.js']),
    );
    for (const file of files) expect(readFileSync(new URL(file.path, root), 'utf8'), file.path).toBe(file.text);
  });
});
