import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { promptText, tempDir } from '../cli/helpers.ts';
import { bytePieces, recorded, streamServer, type StreamServer } from './stream-server.ts';
import { signal } from './stream-providers.ts';

let server: StreamServer | undefined;
let dir: Awaited<ReturnType<typeof tempDir>> | undefined;
afterEach(async () => {
  await server?.close();
  await dir?.cleanup();
  server = dir = undefined;
});

const TEXT = 'Hello, wörld — ☃ "quoted"\nand 🎉 done.';

/**
 * Runs `runvil run ask.md ...flags` in this process against a server that streams the recorded
 * text, holding its last piece until the command's standard error shows the first piece:
 * a command that printed only at the end would never get it.
 */
async function runStreamed(flags: string[], options: { hold: boolean }) {
  const shown = signal();
  const sse = recorded('openai-text.sse');
  const pieces = bytePieces(sse, 13);
  server = await streamServer((body) =>
    body.stream === true ? { pieces, ...(options.hold ? { hold: { at: pieces.length - 1, until: shown.promise } } : {}) } : recorded('openai-text.json'),
  );
  dir = await tempDir({ 'ask.md': promptText('## Ask\nSay hi.\n') });
  let stdout = '';
  let stderr = '';
  let stdoutAtFirstText: string | null = null;
  const status = await main(['run', dir.path('ask.md'), ...flags], {
    out: (text) => void (stdout += text),
    err: (text) => {
      stderr += text;
      if (stderr.includes('Hello') && stdoutAtFirstText === null) {
        stdoutAtFirstText = stdout;
        shown.resolve();
      }
    },
    stdin: new PassThrough(),
    stdinIsTerminal: false,
    env: { OPENAI_BASE_URL: server.url, RUNVIL_DEFAULT_MODEL: 'openai:gpt-test' },
  });
  return { status, stdout, stderr, stdoutAtFirstText };
}

describe('runvil run with a model that streams', () => {
  it("prints the step's text to standard error as it comes, before the result on standard output", async () => {
    const result = await runStreamed([], { hold: true });
    expect(result).toEqual({ status: 0, stdout: `${TEXT}\n`, stderr: `${TEXT}\n`, stdoutAtFirstText: '' });
    expect(server!.bodies()[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('--quiet prints only the result, and asks for no stream', async () => {
    const result = await runStreamed(['--quiet'], { hold: false });
    expect(result).toMatchObject({ status: 0, stdout: `${TEXT}\n`, stderr: '' });
    expect(server!.bodies()[0]!.stream).toBeUndefined();
  });

  it('--events prints the text as model_delta lines among the events, naming the step and the task', async () => {
    const result = await runStreamed(['--events'], { hold: true });
    expect(result.status).toBe(0);
    const lines = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const started = lines.find((line) => line.type === 'model_turn_started')!;
    const deltas = lines.filter((line) => line.type === 'model_delta');
    expect(deltas.map((delta) => delta.text).join('')).toBe(TEXT);
    expect(deltas.every((delta) => delta.step === started.seq && delta.task === '0')).toBe(true);
    // Between the round's start and its completion.
    const at = (line: Record<string, unknown>) => lines.indexOf(line);
    const completed = lines.find((line) => line.type === 'model_turn_completed')!;
    expect(deltas.every((delta) => at(delta) > at(started) && at(delta) < at(completed))).toBe(true);
  });
});
