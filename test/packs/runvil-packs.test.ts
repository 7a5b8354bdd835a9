import { describe, expect, it } from 'vitest';
import { runvilPacks, SUBAGENTS_MANIFEST, subagentsPack, type PageFetcher } from '../../packs/index.ts';
import { toolContext } from './helpers.ts';

describe('runvilPacks', () => {
  it('returns runvil/web, runvil/user-input and runvil/subagents', () => {
    expect(runvilPacks().map((pack) => pack.manifest.fqName)).toEqual(['runvil/web', 'runvil/user-input', 'runvil/subagents']);
  });

  it("names every tool with its own Pack's id first", () => {
    for (const pack of runvilPacks()) {
      const packId = pack.manifest.fqName.split('/')[1];
      for (const tool of pack.manifest.tools) expect(tool.id.split('/')[0]).toBe(packId);
    }
  });

  it('gives runvil/web the page fetcher it is handed', async () => {
    const fetchPage: PageFetcher = async (url) => ({ ok: true, text: `page of ${url}` });
    const [web] = runvilPacks({ fetchPage });
    expect(await web?.call('web/fetch', { url: 'https://www.lua.org/' }, toolContext())).toEqual({
      ok: true,
      output: 'page of https://www.lua.org/',
    });
  });
});

describe('runvil/subagents', () => {
  it('has a description, no tools, no prelude and needs no service', () => {
    expect(SUBAGENTS_MANIFEST).toEqual({ fqName: 'runvil/subagents', description: expect.any(String), tools: [] });
    expect(SUBAGENTS_MANIFEST.description).not.toBe('');
  });

  it('refuses every call, since it has no tools', async () => {
    expect(await subagentsPack().call('subagents/run', {}, toolContext())).toEqual({
      ok: false,
      message: 'subagents/run: runvil/subagents has no tools',
    });
  });
});
