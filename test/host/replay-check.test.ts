/**
 * The replay check of `runvil deploy-check` (src/host/replay-check.ts): a run recorded on one
 * build, cut where it waits on an ask (as a suspended run's journal stands), replayed on
 * another build without calling anything.
 */
import wasmoon from 'wasmoon';
import { describe, expect, it, vi } from 'vitest';
import { replayHosts } from '../../src/cli/replay-host.ts';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { runOnHost, type HostConfig } from '../../src/host/host.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import { ASK_TOOL } from '../../src/host/recording.ts';
import { checkReplay, type ReplayMaterial } from '../../src/host/replay-check.ts';
import { ScriptedProvider } from '../../src/models/scripted.ts';
import { parsePrompt } from '../../src/prompt/parse.ts';

const TRIAGE = `---
name: triage
description: Asks who owns a topic, then when it ships.
runvil: 0
uses: [user-input]
args:
  topic: { type: string }
---
# Triage

## Owner
\`\`\`lua
var.owner = tools.call('user-input/ask', { question = 'Who owns ' .. json.encode({ topic = args.topic }) .. '?' })
\`\`\`

## Date
\`\`\`lua
var.date = tools.call('user-input/ask', { question = 'When does it ship?' })
return var.owner .. ', ' .. var.date
\`\`\`
`;

/** A prompt whose model step is offered acme/deploy's tools (runvil.yaml's), then asks. */
const DEPLOY = `---
name: deploy
description: Plans a deploy, then asks for a go.
runvil: 0
uses: [user-input, acme/deploy]
---
# Deploy

## Plan
\`\`\`lua
packs.offer('deploy')
\`\`\`

Plan the deploy of the api service.

## Go
\`\`\`lua
return tools.call('user-input/ask', { question = 'Go?' })
\`\`\`
`;

const config = (description: string) => {
  const parsed = parseDeploymentConfig(`packs:
  acme/deploy:
    http:
      url: http://127.0.0.1:9/tools
      secret: \${DEPLOY_SECRET}
    trusted: true
    tools:
      - name: start
        description: ${description}
`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
};
const VARS = { DEPLOY_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };

async function newPlatform(): Promise<LuaPlatform> {
  return LuaPlatform.create(() => new wasmoon.LuaFactory());
}

/** Runs `source` to its end with the answers (and model replies) given; the material of the run as it stood when it waited on its last ask. */
async function suspendedRun(platform: LuaPlatform, host: HostConfig, source: string, args: Record<string, string>): Promise<ReplayMaterial> {
  const parsed = parsePrompt(source, 'recorded.md');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const outcome = await runOnHost(platform, host, { prompt: parsed.prompt, args, seed: '7', runId: 'run-a' });
  if (outcome.status !== 'completed') throw new Error(`${outcome.error.kind}: ${outcome.error.message}`);
  const isAsk = (entry: JournalEntry) => entry.request.op === 'tool.call' && entry.request.tool === ASK_TOOL;
  const lastAsk = outcome.journal.length - 1 - [...outcome.journal].reverse().findIndex(isAsk);
  return {
    run_id: 'run-a',
    prompt: parsed.prompt.frontmatter.name,
    status: 'suspended',
    source,
    args,
    seed: '7',
    journal: outcome.journal.slice(0, lastAsk),
    packs: null,
    build: null,
  };
}

describe('the replay check of a run in flight', () => {
  it('reproduces a run suspended on an ask on the build it started on, calling nothing', async () => {
    const platform = await newPlatform();
    const hostOf = replayHosts(config('Start a deploy.'), VARS);
    const run = await suspendedRun(platform, { ...(await hostOf(null)), operator: new ScriptedOperator(['ann', 'monday']) }, TRIAGE, { topic: 'billing' });
    expect(run.journal).toHaveLength(1);
    expect(await checkReplay(platform, await hostOf(null), run)).toEqual({ reproduces: true, entries: 1 });
  });

  it("checks a run on its own source, whatever the prompt's file says now", async () => {
    const platform = await newPlatform();
    const hostOf = replayHosts(config('Start a deploy.'), VARS);
    const run = await suspendedRun(platform, { ...(await hostOf(null)), operator: new ScriptedOperator(['ann', 'monday']) }, TRIAGE, { topic: 'billing' });
    // The file now asks its first question otherwise: the run resumes on the source it started with, and reproduces.
    const edited = TRIAGE.replace("'Who owns '", "'Who is in charge of '");
    expect(await checkReplay(platform, await hostOf(null), run)).toEqual({ reproduces: true, entries: 1 });
    // Had the run been on the edited source, its first step would differ: the source is what the check replays.
    const verdict = await checkReplay(platform, await hostOf(null), { ...run, source: edited });
    expect(verdict).toMatchObject({ reproduces: false, step: { chain: '0', seq: 1, section: 'Owner' } });
  });

  it('names the model round a changed configuration alters: the section, the step, what was recorded and what is sent now', async () => {
    const platform = await newPlatform();
    const before = replayHosts(config('Start a deploy.'), VARS);
    const models = { provider: () => new ScriptedProvider([{ content: 'deploy api, then check' }]) };
    const run = await suspendedRun(platform, { ...(await before(null)), models, operator: new ScriptedOperator(['yes']) }, DEPLOY, {});
    expect(run.journal.map((entry) => entry.request.op)).toEqual(['model.round']);
    expect(await checkReplay(platform, await before(null), run)).toEqual({ reproduces: true, entries: 1 });

    const after = replayHosts(config('Start a deploy and wait until it is live.'), VARS);
    const verdict = await checkReplay(platform, await after(null), run);
    expect(verdict.reproduces).toBe(false);
    if (verdict.reproduces) return;
    expect(verdict.step).toMatchObject({ chain: '0', seq: 1 });
    expect(verdict.step.words).toMatch(/^the run diverged from its journal at effect 1 of chain 0, in section "## Plan": /);
    expect(verdict.step.words).toContain('the journal recorded a model round for role "default" over the conversation as it stood then');
    expect(verdict.step.words).toContain('the tools offered or the model config changed');
    expect(verdict.step.words).toContain('its last message now: user: "Plan the deploy of the api service."');
  });

  it('says when a configuration no longer serves a Pack the run declared', async () => {
    const platform = await newPlatform();
    const before = replayHosts(config('Start a deploy.'), VARS);
    const models = { provider: () => new ScriptedProvider([{ content: 'ok' }]) };
    const run = await suspendedRun(platform, { ...(await before(null)), models, operator: new ScriptedOperator(['yes']) }, DEPLOY, {});
    const without = replayHosts(parseOk('public_url: https://runvil.example.com\n'), VARS);
    const verdict = await checkReplay(platform, await without(null), run);
    expect(verdict).toMatchObject({ reproduces: false, step: { chain: '0', seq: 1 } });
    if (verdict.reproduces) return;
    expect(verdict.step.words).toMatch(/^the prompt now ends with error\[RequirementsUnmet\] .*acme\/deploy/s);
    expect(verdict.step.words).toContain("before it reaches the rest of the journal: the journal's effect 1 of chain 0, a model round");
  });

  it("says so when the run's own source no longer parses", async () => {
    const platform = await newPlatform();
    const hostOf = replayHosts(config('Start a deploy.'), VARS);
    const run = await suspendedRun(platform, { ...(await hostOf(null)), operator: new ScriptedOperator(['ann', 'monday']) }, TRIAGE, { topic: 'billing' });
    const verdict = await checkReplay(platform, await hostOf(null), { ...run, source: TRIAGE.replace('runvil: 0', 'runvil: 9') });
    expect(verdict).toMatchObject({ reproduces: false, step: { chain: null, seq: null } });
    if (!verdict.reproduces) expect(verdict.step.words).toMatch(/^the run's own prompt source no longer parses on this build: \d+:\d+: invalid frontmatter/);
  });
});

describe('the replay check on a build whose Lua runtime differs', () => {
  it('names the first step a changed builtin alters, and passes the runs that never reach it', async () => {
    const platform = await newPlatform();
    const hostOf = replayHosts(config('Start a deploy.'), VARS);
    const run = await suspendedRun(platform, { ...(await hostOf(null)), operator: new ScriptedOperator(['ann', 'monday']) }, TRIAGE, { topic: 'billing' });
    const plain = TRIAGE.replace('json.encode({ topic = args.topic })', 'args.topic');
    const untouched = await suspendedRun(platform, { ...(await hostOf(null)), operator: new ScriptedOperator(['ann', 'monday']) }, plain, { topic: 'billing' });

    // A test-only build: json.encode adds a space to every text it makes. The Engine's modules
    // are loaded again over it, with a platform of their own.
    const { LUA_SOURCES } = await import('../../src/engine/lua/runtime/sources.generated.ts');
    const tweaked = LUA_SOURCES.json.replace('      return text\n    end,\n    decode', "      return text .. ' '\n    end,\n    decode");
    expect(tweaked).not.toBe(LUA_SOURCES.json);
    vi.resetModules();
    vi.doMock('../../src/engine/lua/runtime/sources.generated.ts', () => ({ LUA_SOURCES: { ...LUA_SOURCES, json: tweaked } }));
    try {
      const engine = await import('../../src/engine/lua/vm.ts');
      const check = await import('../../src/host/replay-check.ts');
      const hosts = await import('../../src/cli/replay-host.ts');
      const platformC = await engine.LuaPlatform.create(() => new wasmoon.LuaFactory());
      const hostC = await hosts.replayHosts(config('Start a deploy.'), VARS)(null);
      const verdict = await check.checkReplay(platformC, hostC, run);
      expect(verdict.reproduces).toBe(false);
      if (!verdict.reproduces) {
        expect(verdict.step).toMatchObject({ chain: '0', seq: 1, section: 'Owner' });
        expect(verdict.step.words).toBe(
          'the run diverged from its journal at effect 1 of chain 0, in section "## Owner": the journal recorded a call of user-input/ask with arguments {"question":"Who owns {\\"topic\\":\\"billing\\"}?"}; the prompt now asks for the same tool with arguments {"question":"Who owns {\\"topic\\":\\"billing\\"} ?"}',
        );
      }
      expect(await check.checkReplay(platformC, hostC, untouched)).toEqual({ reproduces: true, entries: 1 });
    } finally {
      vi.doUnmock('../../src/engine/lua/runtime/sources.generated.ts');
      vi.resetModules();
    }
  });
});

function parseOk(text: string) {
  const parsed = parseDeploymentConfig(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}
