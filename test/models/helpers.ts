/**
 * Helpers for the provider tests: a loopback server that speaks a wire format from a queue of
 * answers, a Pack whose tools count their calls, and a `models.loop` prompt run on a Host.
 */
import type { ServerResponse } from 'node:http';
import { cliPlatform } from '../../src/cli/platform.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import type { RunOutcome } from '../../src/engine/run.ts';
import type { ModelDirectory } from '../../src/models/provider.ts';
import { runOnHost } from '../../src/host/host.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import type { Pack } from '../../src/host/pack.ts';
import type { RoundOptions } from '../../src/models/http-round.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import type { Json } from '../../src/json/json.ts';
import { startServer, type SeenRequest } from '../packs/helpers.ts';

/** One answer of the test server. */
export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body. */
  body?: string;
  /** Sends these bytes of a longer body, then drops the connection. */
  cut?: string;
  /** Never answers. */
  hang?: boolean;
}

/** The loopback server of a provider test. */
export interface ModelServer {
  url: string;
  requests: SeenRequest[];
  /** Each request body, parsed. */
  bodies(): unknown[];
  close(): Promise<void>;
}

/** A server on 127.0.0.1 answering each request with the next answer (a 500 once they run out). */
export async function modelServer(answers: Answer[]): Promise<ModelServer> {
  let next = 0;
  const server = await startServer((_request, response) =>
    answer(response, answers[next++] ?? { status: 500, json: { error: 'the test has no answer left' } }),
  );
  return { ...server, bodies: () => server.requests.map((request) => JSON.parse(request.body) as unknown) };
}

function answer(response: ServerResponse, spec: Answer): void {
  if (spec.hang) return;
  const headers = { 'content-type': 'application/json', ...spec.headers };
  if (spec.cut !== undefined) {
    response.writeHead(spec.status ?? 200, { ...headers, 'content-length': String(Buffer.byteLength(spec.cut) + 500) });
    response.write(spec.cut, () => response.destroy());
    return;
  }
  const body = spec.body ?? JSON.stringify(spec.json ?? {});
  response.writeHead(spec.status ?? 200, headers);
  response.end(body);
}

/** Round options for tests: no waiting, every wait recorded. */
export function fastRounds(extra: RoundOptions = {}): RoundOptions & { waits: number[] } {
  const waits: number[] = [];
  return { timeoutMs: 5_000, backoffMs: () => 10, sleep: async (ms) => void waits.push(ms), waits, ...extra };
}

/** The tools of `acme/stats`: `stats/count` answers, `stats/broken` fails; both record their calls. */
export function statsPack(calls: { tool: string; args: Json }[]): Pack {
  return {
    manifest: {
      fqName: 'acme/stats',
      description: 'Counts things',
      tools: [
        {
          id: 'stats/count',
          description: 'Count the letters of a text',
          parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          output: 'plain',
          trusted: true,
        },
        { id: 'stats/broken', description: 'Always fails', parameters: { type: 'object', properties: {} }, output: 'plain', trusted: true },
      ],
    },
    async call(tool, args) {
      calls.push({ tool, args });
      if (tool === 'stats/count') return { ok: true, output: `${String(args.text).length} letters` };
      return { ok: false, message: 'stats: broken' };
    },
  };
}

/**
 * A prompt whose H1 prose is the system message and whose one section offers both stats
 * tools and the local tool `grab`, then runs `models.loop()` for the role `writer`.
 */
export function loopPrompt(writer: string): string {
  return [
    '---',
    'name: loop',
    'description: Lets the model call a local tool and two catalog tools.',
    'runvil: 0',
    'uses: [acme/stats]',
    'models:',
    `  writer: ${writer}`,
    '---',
    '',
    '# Loop',
    '',
    'You are terse.',
    '',
    '## Only',
    '',
    '```lua',
    "models.use('writer')",
    "tools.offer({ 'stats/count', 'stats/broken' })",
    "tools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)",
    "messages:user('Go.')",
    'return models.loop()',
    '```',
    '',
  ].join('\n');
}

/** Runs `text` on a Host with the stats Pack and `models`; returns the outcome and the tool calls made. */
export async function runLoop(
  text: string,
  models: ModelDirectory,
  options: { journal?: readonly JournalEntry[] } = {},
): Promise<{ outcome: RunOutcome; calls: { tool: string; args: Json }[] }> {
  const parsed = parsePrompt(text, 'loop.md');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const calls: { tool: string; args: Json }[] = [];
  const host = { packs: [statsPack(calls)], models, operator: new ScriptedOperator([]) };
  const outcome = await runOnHost(await cliPlatform(), host, {
    prompt: parsed.prompt,
    seed: 'models',
    ...(options.journal ? { journal: options.journal } : {}),
  });
  return { outcome, calls };
}

/** The content of the `tool_result` event of one call. */
export function toolResult(outcome: RunOutcome, callId: string): string {
  const event = outcome.events.find((e) => e.type === 'tool_result' && (e as { tool_call_id?: string }).tool_call_id === callId);
  if (!event) throw new Error(`no tool_result event for ${callId}`);
  return (event as unknown as { content: string }).content;
}

/** The journal without its failed model rounds: what a Host retries a run with. */
export function answeredJournal(journal: readonly JournalEntry[]): JournalEntry[] {
  return journal.filter((entry) => !(entry.request.op === 'model.round' && !entry.answer.ok));
}
