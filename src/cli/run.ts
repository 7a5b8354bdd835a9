/**
 * `runvil run PROMPT.md`: parses the prompt, checks its arguments, runs it on the local Host
 * (its models from the environment, or `--model`) or on the fixture Host with `--script FILE`,
 * and prints the result, or the error; each model step's text goes to standard error as it
 * comes (step-text.ts), unless `--quiet`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { MemoryCallLedger } from '../host/memory-call-ledger.ts';
import { snapshotPacks, snapshotPacksToPacks, type ProgressListener } from '../host/remote/configured-packs.ts';
import { filePinStore, pinFileOf } from './pin-file.ts';
import { CallbackListener } from './callback-listener.ts';
import { fixtureHost } from '../fixture/fixture-host.ts';
import type { HostConfig } from '../host/host.ts';
import type { Pack } from '../host/pack.ts';
import { runOnHost } from '../host/host.ts';
import { exceptionText, internalRunError } from '../host/internal-error.ts';
import type { RunOutcome } from '../engine/run.ts';
import { parsePrompt } from '../prompt/index.ts';
import { UsageError, type RunCommand } from './args.ts';
import { deploymentConfigFile, loadDeploymentConfig } from './config-file.ts';
import { commandLineRemedies, type PackSource } from './remedies.ts';
import type { CliIo } from './io.ts';
import { localHost } from './local-host.ts';
import { cliPlatform, entryTimeLimit } from './platform.ts';
import { argsFromCommandLine } from '../prompt/run-args.ts';
import { formatError, readUserFile } from './prompt-file.ts';
import { parseScriptFile, type Fixture } from './test-file.ts';
import { stepTextPrinter } from './step-text.ts';
import { commandLineOperator } from './terminal-operator.ts';
import { RECORDED_RUN_ID, recordedStart, storeAfter } from './run-from.ts';
import { checkFork, rebaseJournal } from '../host/fork.ts';
import type { JournalEntry } from '../engine/journal.ts';
import type { MemoryRunStore } from '../host/run-store.ts';
import { argsFromData } from '../prompt/run-args.ts';
import { OPERATOR_WINDOW_CLOSED } from '../host/operator.ts';

/** Runs `runvil run`; answers the exit status (0 completed, 1 failed). */
export async function runCommand(command: RunCommand, io: CliIo): Promise<number> {
  const platform = await cliPlatform();
  const from = command.from ? await recordedStart(command.from.file, command.from.until, platform) : undefined;
  // With --from and no prompt file of its own, the test file's prompt goes on.
  const ownPrompt = !from || command.file !== command.from?.file;
  const text = ownPrompt ? await readUserFile(command.file, 'prompt file') : from.prompt.text;
  const fixture = command.script === undefined ? undefined : await readScript(command.script);
  const config = await loadDeploymentConfig(command.config);
  const parsed = parsePrompt(text, ownPrompt ? command.file : from.prompt.name);
  if (!parsed.ok) {
    for (const error of parsed.errors) io.err(`${formatError(error)}\n`);
    const first = parsed.errors[0]!;
    if (command.json) printJson(io, { status: 'failed', error: { kind: first.kind, message: first.message }, events: [] });
    return 1;
  }
  const prompt = parsed.prompt;
  const args = from ? argsFromData(prompt.frontmatter.args, from.args) : argsFromCommandLine(prompt.frontmatter.args, command.args);
  if (!args.ok) throw new UsageError(args.message, { file: command.file });

  const operator = commandLineOperator([...(fixture?.answers ?? []), ...command.answers], io, { script: fixture !== undefined });
  // A real run has an id of its own: its tool calls' ids derive from it, and a service tells runs apart by them.
  const runId = fixture ? undefined : randomBytes(16).toString('hex');
  const listener = new CallbackListener(runId ?? 'run-1', callbackPort(io.env));
  const calls = new MemoryCallLedger({ callback: (callId) => listener.callback(callId) });
  listener.deliver = (callId, result) => calls.deliver(callId, result);
  const closeAll = () => {
    operator.close();
    calls.closeAll();
    listener.close();
  };
  const base: HostConfig = fixture
    ? { ...fixtureHost(fixture.host, [], fixture.model, { calls: fixture.recorded, clock: fixture.clock }), operator }
    : { ...localHost(io.env, operator, command.model, config), calls };
  // The configured MCP Packs the prompt declares, with their tool lists read now and judged against their pins.
  const configFile = deploymentConfigFile(command.config);
  const snapshots = await snapshotPacks(config, prompt, io.env, [], undefined, configFile === null ? null : filePinStore(pinFileOf(configFile)));
  const progress: ProgressListener = (tool, context, step) => {
    const event = { type: 'tool_progress', task: context.effect?.chain ?? '0', tool, ...step };
    if (command.events) io.err(`${JSON.stringify(event)}\n`);
  };
  const packSource: PackSource = fixture
    ? { kind: 'script', file: command.script! }
    : { kind: 'config', file: deploymentConfigFile(command.config), runvilPacks: runvilPackIds(base.packs) };
  const host: HostConfig = {
    ...base,
    packs: [...base.packs, ...snapshotPacksToPacks(snapshots, io.env, progress)],
    remedies: commandLineRemedies(packSource),
  };
  // A real run gets a fresh seed, so its untrusted-input nonce cannot be guessed; a scripted one is repeatable.
  const seed = from?.seed ?? command.seed ?? fixture?.seed ?? (fixture ? '0' : randomUUID());

  let forked: { journal: JournalEntry[]; store: MemoryRunStore } | undefined;
  if (from) {
    const checked = await checkFork({
      platform,
      host,
      prompt,
      args: args.args,
      untrustedArgs: from.untrustedArgs,
      seed,
      runId: runId ?? 'run-1',
      // The test file's run was rebuilt as run-1 (its fixture Host's); its tool calls name the run that made them, here this one.
      prefix: { ok: true, journal: rebaseJournal(from.journal, RECORDED_RUN_ID, runId ?? RECORDED_RUN_ID), firstReplaced: null },
    });
    if (!checked.ok) {
      const error = {
        kind: 'Determinism',
        message: `the prompt cannot reproduce the first ${from.journal.length} journal entries of ${command.from!.file}: ${checked.message}`,
      };
      io.err(`${formatError(error)}\n`);
      if (command.json) printJson(io, { status: 'failed', error, events: [] });
      closeAll();
      return 1;
    }
    forked = { journal: checked.journal, store: storeAfter(checked.journal) };
  }

  // A model step's text as it comes, unless only the result (--quiet) or one JSON object (--json) is wanted.
  const stepText = command.quiet || (command.json && !command.events) ? null : stepTextPrinter(io, command.events);
  const outcome = await runOnHost(platform, host, {
    ...(runId !== undefined ? { runId } : {}),
    prompt,
    args: args.args,
    ...(from ? { untrustedArgs: from.untrustedArgs } : {}),
    seed,
    ...(forked ? { journal: forked.journal, store: forked.store } : {}),
    ...(stepText ? { onModelDelta: stepText.delta } : {}),
    onEvent: (event) => {
      stepText?.event(event);
      operator.heard(event);
      io.event?.(event);
      if (command.events) io.err(`${JSON.stringify(event)}\n`);
    },
    ...(command.maxInstructions !== undefined ? { limits: { instructions: command.maxInstructions } } : {}),
    ...entryTimeLimit(command.entryTimeoutSeconds),
  })
    .catch((error: unknown): RunOutcome => {
      // The exception goes to stderr, as a log line; the run's error (the --json output too) says what happened in words.
      io.err(`runvil: internal error: ${exceptionText(error)}\n`);
      return { status: 'failed', error: internalRunError(error), events: [], journal: [] };
    })
    .finally(() => {
      stepText?.end();
      closeAll();
    });
  report(withOperatorHint(outcome, operator.noTerminalHint()), command, io);
  return outcome.status === 'completed' ? 0 : 1;
}

/**
 * A run that failed on the closed window of an ask no one could answer (no terminal, no
 * answer left) says how to answer it; the ask's own failure, which the Lua and the model
 * read, stays the model-safe text.
 */
function withOperatorHint(outcome: RunOutcome, hint: string | null): RunOutcome {
  if (hint === null || outcome.status !== 'failed' || !outcome.error.message.includes(OPERATOR_WINDOW_CLOSED)) return outcome;
  return { ...outcome, error: { ...outcome.error, message: `${outcome.error.message}: ${hint}` } };
}

/** The Pack ids of the runvil Packs among `packs`, for the remedy of an unknown bare entry. */
function runvilPackIds(packs: readonly Pack[]): string[] {
  return packs.flatMap((pack) => (pack.manifest.fqName.startsWith('runvil/') ? [pack.manifest.fqName.slice('runvil/'.length)] : []));
}

/** The port `RUNVIL_CALLBACK_PORT` names for the tool-result listener, or 0 for any free one. */
function callbackPort(env: Record<string, string | undefined>): number {
  const text = Object.hasOwn(env, 'RUNVIL_CALLBACK_PORT') ? env.RUNVIL_CALLBACK_PORT : undefined;
  const port = Number(text);
  if (text === undefined || text === '') return 0;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new UsageError(`RUNVIL_CALLBACK_PORT must be a port number (1 to 65535), not ${JSON.stringify(text.slice(0, 50))}`);
  return port;
}

async function readScript(file: string): Promise<Fixture> {
  const parsed = parseScriptFile(await readUserFile(file, 'script file'));
  if (!parsed.ok) throw UsageError.inFile(file, parsed.problems);
  return parsed.value;
}

function report(outcome: RunOutcome, command: RunCommand, io: CliIo): void {
  if (command.json) {
    printJson(
      io,
      outcome.status === 'completed'
        ? { status: outcome.status, result: outcome.result, events: outcome.events }
        : { status: outcome.status, error: { kind: outcome.error.kind, message: outcome.error.message }, events: outcome.events },
    );
  } else if (outcome.status === 'completed') {
    io.out(outcome.result.endsWith('\n') ? outcome.result : `${outcome.result}\n`);
  }
  if (outcome.status === 'failed') {
    if (!command.json) io.err(`${formatError(outcome.error)}\n`);
    if (command.verbose && outcome.error.traceback) io.err(`${outcome.error.traceback}\n`);
  }
}

/** The `--json` object: always all four keys, `null` for the one that does not apply. */
function printJson(io: CliIo, value: { status: string; result?: string; error?: { kind: string; message: string }; events: unknown[] }): void {
  const { status, result = null, error = null, events } = value;
  io.out(`${JSON.stringify({ status, result, error, events })}\n`);
}
