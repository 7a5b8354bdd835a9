/**
 * Runs on the fixture Host (src/host/fixture-host.ts) for the Engine tests of the Tools
 * chapter: the real runvil Packs over fixture pages, third-party fixture Packs, the scripted
 * model (whose requests the test can read) and scripted operator answers.
 */
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { RunOutcome } from '../../src/engine/run.ts';
import type { RunEvent } from '../../src/engine/events.ts';
import { fixtureHost, type FixtureHostSpec } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import type { ModelRequest } from '../../src/models/provider.ts';
import type { ScriptedProvider, ScriptedReply } from '../../src/models/scripted.ts';
import type { Prompt } from '../../src/prompt/types.ts';

/** What one fixture run is given. */
export interface FixtureRun {
  host?: FixtureHostSpec;
  model?: ScriptedReply[];
  answers?: string[];
}

/** A fixture run's outcome, with the model requests the scripted model saw. */
export type FixtureOutcome = RunOutcome & { requests: ModelRequest[] };

/** Runs `target` on a fixture Host. */
export async function runFixture(platform: LuaPlatform, target: Prompt, fixture: FixtureRun = {}): Promise<FixtureOutcome> {
  const host = fixtureHost(fixture.host ?? {}, fixture.answers ?? [], fixture.model ?? []);
  const model = host.models.provider({}, 'writer') as ScriptedProvider;
  const outcome = await runOnHost(platform, host, { prompt: target });
  return { ...outcome, requests: model.requests };
}

/** The run's result; throws with the error when it failed. */
export function resultOf(outcome: RunOutcome): string {
  if (outcome.status !== 'completed') throw new Error(`run failed: ${outcome.error.kind}: ${outcome.error.message}`);
  return outcome.result;
}

/** The run's error; throws when it completed. */
export function errorOf(outcome: RunOutcome): { kind: string; message: string } {
  if (outcome.status !== 'failed') throw new Error(`run completed with ${JSON.stringify(outcome.result)}`);
  return outcome.error;
}

/** The events of the given types, in order. */
export function eventsOf(outcome: RunOutcome, ...types: string[]): RunEvent[] {
  return outcome.events.filter((event) => types.includes(event.type));
}

/** The tool names each model request advertised (null: the request had no tool list). */
export function advertised(requests: ModelRequest[]): (string[] | null)[] {
  return requests.map((request) => (request.tools ? request.tools.map((tool) => tool.name) : null));
}

/** A fixture host whose web/search answers `results for lua` for the query lua, `other results` for any other. */
export const SEARCH = { web: { search: { lua: 'results for lua', '*': 'other results' } } };

/** The frontmatter lines that declare one model role, `writer`. */
export const WRITER = 'models:\n  writer: {}\n';

/** A Lua string literal for `text`. */
export function luaString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

const ROUND_EVENTS = [
  'model_turn_completed',
  'assistant_tool_calls',
  'tool_call_succeeded',
  'tool_call_failed',
  'tool_result',
  'tool_scope_validation_started',
  'tool_scope_validation_succeeded',
];

/** A tool round's events as `type@turn`, for order checks. */
export function roundSequence(events: RunEvent[]): string[] {
  return events.filter((event) => ROUND_EVENTS.includes(event.type)).map((event) => `${event.type}@${event.turn}`);
}
