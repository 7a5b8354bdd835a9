/**
 * The command line's grammar: which command, which options, which files. A mistake here is
 * a usage error (exit status 2) that names what was wrong.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseModelChoice, type ModelChoice } from '../models/directory.ts';

/** Where a usage mistake is: a file, and a line and column in it when known. */
export interface UsagePlace {
  file: string;
  line?: number;
  column?: number;
}

/** A mistake in how runvil was invoked, or in a file it was pointed at; exits with status 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** Where the mistake is, printed before the message as `file:line:column: `. */
    readonly where?: UsagePlace,
    /** Further mistakes found with this one (every problem of one file, say). */
    readonly more: UsageError[] = [],
  ) {
    super(message);
    this.name = 'UsageError';
  }

  /** One error for every problem found in `file`. */
  static inFile(file: string, problems: readonly { message: string; line?: number; column?: number }[]): UsageError {
    const [first, ...rest] = problems.map((p) => new UsageError(p.message, { file, ...place(p) }));
    if (!first) throw new Error('UsageError.inFile needs at least one problem');
    return new UsageError(first.message, first.where, rest);
  }
}

function place(problem: { line?: number; column?: number }): { line?: number; column?: number } {
  return {
    ...(problem.line !== undefined ? { line: problem.line } : {}),
    ...(problem.column !== undefined ? { column: problem.column } : {}),
  };
}

/** Options of `runvil run`. */
export interface RunCommand {
  command: 'run';
  file: string;
  args: { key: string; value: string }[];
  script?: string;
  /** `--model provider:MODEL`: the provider and model of every role. */
  model?: ModelChoice;
  seed?: string;
  json: boolean;
  events: boolean;
  verbose: boolean;
  /** `--quiet`: only the result, not each model step's text as it comes. */
  quiet: boolean;
  answers: string[];
  maxInstructions?: number;
  /** `--entry-timeout SECONDS`: how long one section entry may compute (0: no limit). */
  entryTimeoutSeconds: number;
  /**
   * `--from FILE.test.yaml [--until N]`: a fork of the run the test file records, at N (its
   * whole journal by default). `file` is then a new source for it, or the test file itself
   * when the test's own prompt runs.
   */
  from?: { file: string; until?: number };
  /** `--config FILE`: the deployment's configuration (default ./runvil.yaml when present). */
  config?: string;
}

/** Options of `runvil check`. */
export interface CheckCommand {
  command: 'check';
  files: string[];
  /** `--config FILE`: the deployment whose Packs each prompt's `uses:` is checked against. */
  config?: string;
}

/** Options of `runvil test`. */
export interface TestCommand {
  command: 'test';
  paths: string[];
  /** `--entry-timeout SECONDS`, for every test's run. */
  entryTimeoutSeconds: number;
}

/**
 * How long one section entry may compute, in wall-clock seconds, by default: far above
 * what an instruction budget's worth of Lua takes (a few seconds), so only an entry stuck
 * in a long call in C reaches it.
 */
export const DEFAULT_ENTRY_TIMEOUT_SECONDS = 60;

/** `runvil help [COMMAND]`, `runvil --help`, `runvil COMMAND --help`. */
export interface HelpCommand {
  command: 'help';
  topic?: string;
}

/** Where a command that talks to a deployment sends its requests, and with which credential. */
export interface DeploymentTarget {
  /** `--url URL`: the deployment's origin. */
  url: string;
  /** `--token T`, else RUNVIL_API_TOKEN from the environment (read when the command runs). */
  token?: string;
}

/** Options of `runvil keys create|list|revoke` (keys.ts). */
export type KeysCommand = { command: 'keys'; target: DeploymentTarget; json: boolean } & (
  { action: 'create'; name: string; scopes: string[] } | { action: 'list' } | { action: 'revoke'; id: string }
);

/**
 * Options of `runvil packs accept NAME` (packs.ts): with `--url`, the deployment's pin (its
 * root key); without, this command line's own (`.runvil/pins.json` beside the runvil.yaml read).
 */
export interface PacksCommand {
  command: 'packs';
  action: 'accept';
  name: string;
  target?: DeploymentTarget;
  config?: string;
  json: boolean;
}

/**
 * Options of `runvil deploy-check` (deploy-check.ts): the deployment whose suspended runs are
 * replayed on this checkout's build.
 */
export interface DeployCheckCommand {
  command: 'deploy-check';
  target: DeploymentTarget;
  /** `--force`: exit 0 even when runs would not reproduce (the deploy goes ahead). */
  force: boolean;
  /** `--concurrency N`: replay threads (default: the machine's available parallelism). */
  concurrency?: number;
  /** `--config FILE`: the configuration about to be deployed (default: RUNVIL_CONFIG, else ./runvil.yaml). */
  config?: string;
}

/** A parsed command line. */
export type Command = RunCommand | CheckCommand | TestCommand | KeysCommand | PacksCommand | DeployCheckCommand | HelpCommand;

/** The commands runvil knows. */
export const COMMANDS = ['run', 'check', 'test', 'keys', 'packs', 'deploy-check', 'help'] as const;

const RUN_OPTIONS = {
  arg: { type: 'string', multiple: true },
  script: { type: 'string' },
  model: { type: 'string' },
  seed: { type: 'string' },
  json: { type: 'boolean' },
  events: { type: 'boolean' },
  verbose: { type: 'boolean' },
  quiet: { type: 'boolean' },
  answer: { type: 'string', multiple: true },
  'max-instructions': { type: 'string' },
  'entry-timeout': { type: 'string' },
  from: { type: 'string' },
  until: { type: 'string' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const HELP_ONLY = { help: { type: 'boolean', short: 'h' } } as const satisfies ParseArgsConfig['options'];

const CHECK_OPTIONS = { ...HELP_ONLY, config: { type: 'string' } } as const satisfies ParseArgsConfig['options'];

const TEST_OPTIONS = { ...HELP_ONLY, 'entry-timeout': { type: 'string' } } as const satisfies ParseArgsConfig['options'];

const PACKS_OPTIONS = {
  ...HELP_ONLY,
  url: { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

const KEYS_OPTIONS = {
  ...HELP_ONLY,
  url: { type: 'string' },
  token: { type: 'string' },
  scope: { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

const DEPLOY_CHECK_OPTIONS = {
  ...HELP_ONLY,
  url: { type: 'string' },
  token: { type: 'string' },
  force: { type: 'boolean' },
  concurrency: { type: 'string' },
  config: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** Parses argv (without `node` and the script) into a command, or throws a UsageError. */
export function parseCommandLine(argv: readonly string[]): Command {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') return { command: 'help' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic !== undefined && !(COMMANDS as readonly string[]).includes(topic)) throw unknownCommand(topic);
    return topic === undefined ? { command: 'help' } : { command: 'help', topic };
  }
  if (first.startsWith('-')) throw new UsageError(`unknown option ${first} (a command comes first: ${listed('or')})`);
  switch (first) {
    case 'run':
      return parseRun(rest);
    case 'check': {
      const { values, positionals } = parse(rest, CHECK_OPTIONS, 'check');
      if (values.help) return { command: 'help', topic: 'check' };
      if (positionals.length === 0) throw new UsageError('runvil check needs at least one prompt file (or runvil.yaml)');
      return { command: 'check', files: positionals, ...(values.config !== undefined ? { config: values.config } : {}) };
    }
    case 'test': {
      const { values, positionals } = parse(rest, TEST_OPTIONS, 'test');
      if (values.help) return { command: 'help', topic: 'test' };
      return { command: 'test', paths: positionals.length > 0 ? positionals : ['.'], entryTimeoutSeconds: entryTimeout(values['entry-timeout']) };
    }
    case 'keys':
      return parseKeys(rest);
    case 'packs':
      return parsePacks(rest);
    case 'deploy-check':
      return parseDeployCheck(rest);
    default:
      throw unknownCommand(first);
  }
}

function parseKeys(argv: string[]): Command {
  const { values, positionals } = parse(argv, KEYS_OPTIONS, 'keys');
  if (values.help) return { command: 'help', topic: 'keys' };
  const [action, ...operands] = positionals;
  if (action === undefined) throw new UsageError('runvil keys needs an action: create NAME --scope SCOPE..., list, or revoke ID');
  const url = values.url;
  if (url === undefined) throw new UsageError("runvil keys needs --url URL: the deployment's address, such as https://runvil.example.workers.dev");
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url takes the deployment's address, http:// or https://, got ${JSON.stringify(url)}`);
  const target: DeploymentTarget = { url: url.replace(/\/+$/, ''), ...(values.token !== undefined ? { token: values.token } : {}) };
  const json = values.json ?? false;
  const scopes = values.scope ?? [];
  if (action !== 'create' && scopes.length > 0) throw new UsageError(`--scope goes with runvil keys create, not ${action}`);
  switch (action) {
    case 'create': {
      if (operands.length !== 1) throw new UsageError('runvil keys create takes one name: runvil keys create NAME --scope SCOPE [--scope SCOPE...]');
      if (scopes.length === 0) throw new UsageError('runvil keys create needs at least one --scope, such as --scope runs:read');
      return { command: 'keys', action, name: operands[0]!, scopes, target, json };
    }
    case 'list':
      if (operands.length > 0) throw new UsageError(`runvil keys list takes no operands, got ${operands.join(' ')}`);
      return { command: 'keys', action, target, json };
    case 'revoke':
      if (operands.length !== 1) throw new UsageError('runvil keys revoke takes one key id (runvil keys list shows them): runvil keys revoke ID');
      return { command: 'keys', action, id: operands[0]!, target, json };
    default:
      throw new UsageError(`unknown action ${JSON.stringify(action)} for runvil keys; the actions are create, list and revoke`);
  }
}

function parseDeployCheck(argv: string[]): Command {
  const { values, positionals } = parse(argv, DEPLOY_CHECK_OPTIONS, 'deploy-check');
  if (values.help) return { command: 'help', topic: 'deploy-check' };
  if (positionals.length > 0) throw new UsageError(`runvil deploy-check takes no operands, got ${positionals.join(' ')}: the deployment is --url URL`);
  const url = values.url;
  if (url === undefined)
    throw new UsageError(
      'runvil deploy-check needs --url URL: the address of the deployment about to be deployed to, such as https://runvil.example.workers.dev',
    );
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url takes the deployment's address, http:// or https://, got ${JSON.stringify(url)}`);
  const command: DeployCheckCommand = {
    command: 'deploy-check',
    target: { url: url.replace(/\/+$/, ''), ...(values.token !== undefined ? { token: values.token } : {}) },
    force: values.force ?? false,
  };
  const concurrency = values.concurrency;
  if (concurrency !== undefined) {
    if (!/^[1-9][0-9]*$/.test(concurrency) || Number(concurrency) > 256)
      throw new UsageError(`--concurrency takes the number of replay threads, a whole number from 1 to 256, got ${JSON.stringify(concurrency)}`);
    command.concurrency = Number(concurrency);
  }
  if (values.config !== undefined) command.config = values.config;
  return command;
}

function parsePacks(argv: string[]): Command {
  const { values, positionals } = parse(argv, PACKS_OPTIONS, 'packs');
  if (values.help) return { command: 'help', topic: 'packs' };
  const [action, ...operands] = positionals;
  if (action !== 'accept') {
    throw new UsageError(
      action === undefined
        ? 'runvil packs needs an action: accept VENDOR/NAME'
        : `unknown action ${JSON.stringify(action)} for runvil packs; the action is accept`,
    );
  }
  if (operands.length !== 1 || !/^[^/\s]+\/[^/\s]+$/.test(operands[0]!)) {
    throw new UsageError("runvil packs accept takes one Pack's fully qualified name, as runvil.yaml's packs: names it: runvil packs accept VENDOR/NAME");
  }
  const command: PacksCommand = { command: 'packs', action, name: operands[0]!, json: values.json ?? false };
  if (values.url !== undefined) {
    if (values.config !== undefined) throw new UsageError('--config goes without --url: a deployment accepts with its own runvil.yaml');
    if (!/^https?:\/\/[^/]/.test(values.url))
      throw new UsageError(`--url takes the deployment's address, http:// or https://, got ${JSON.stringify(values.url)}`);
    command.target = { url: values.url.replace(/\/+$/, ''), ...(values.token !== undefined ? { token: values.token } : {}) };
  } else if (values.token !== undefined) {
    throw new UsageError('--token goes with --url: accepting on this machine needs no key');
  }
  if (values.config !== undefined) command.config = values.config;
  return command;
}

function parseRun(argv: string[]): Command {
  const { values, positionals } = parse(argv, RUN_OPTIONS, 'run');
  if (values.help) return { command: 'help', topic: 'run' };
  if (positionals.length === 0 && values.from === undefined) throw new UsageError('runvil run needs a prompt file: runvil run PROMPT.md');
  if (positionals.length > 1) throw new UsageError(`runvil run takes one prompt file, got ${positionals.length}: ${positionals.join(' ')}`);
  if (values.until !== undefined && values.from === undefined)
    throw new UsageError("--until goes with --from FILE.test.yaml: it says how many of the recorded run's journal entries the run starts with");
  const command: RunCommand = {
    command: 'run',
    file: positionals[0] ?? values.from!,
    args: (values.arg ?? []).map((text) => splitArg(text, positionals[0]!)),
    json: values.json ?? false,
    events: values.events ?? false,
    verbose: values.verbose ?? false,
    quiet: values.quiet ?? false,
    answers: values.answer ?? [],
    entryTimeoutSeconds: entryTimeout(values['entry-timeout']),
  };
  if (values.script !== undefined) command.script = values.script;
  if (values.model !== undefined) {
    if (values.script !== undefined) throw new UsageError('--model and --script do not go together: --script answers every model round from its file');
    const choice = parseModelChoice(values.model);
    if (typeof choice === 'string') throw new UsageError(`--model: ${choice}`);
    command.model = choice;
  }
  if (values.seed !== undefined) command.seed = values.seed;
  if (values.from !== undefined) {
    if (values.seed !== undefined)
      throw new UsageError("--seed and --from do not go together: the run keeps the recorded run's seed, or it could not replay it");
    if (values.arg !== undefined) throw new UsageError("--arg and --from do not go together: the run keeps the recorded run's args, or it could not replay it");
    command.from = { file: values.from };
    const until = values.until;
    if (until !== undefined) {
      if (!/^[0-9]+$/.test(until) || !Number.isSafeInteger(Number(until)))
        throw new UsageError(`--until takes a whole number of journal entries (0 or more), got ${JSON.stringify(until)}`);
      command.from.until = Number(until);
    }
  }
  if (values.config !== undefined) command.config = values.config;
  const max = values['max-instructions'];
  if (max !== undefined) {
    if (!/^[1-9][0-9]*$/.test(max) || !Number.isSafeInteger(Number(max))) {
      throw new UsageError(`--max-instructions takes a positive whole number, got ${JSON.stringify(max)}`);
    }
    command.maxInstructions = Number(max);
  }
  return command;
}

/** The value of `--entry-timeout`: seconds, a decimal fraction allowed; 0 turns the limit off. */
function entryTimeout(text: string | undefined): number {
  if (text === undefined) return DEFAULT_ENTRY_TIMEOUT_SECONDS;
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text) || !Number.isFinite(Number(text))) {
    throw new UsageError(`--entry-timeout takes a number of seconds (0 for no limit), got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function splitArg(text: string, file: string): { key: string; value: string } {
  const at = text.indexOf('=');
  if (at <= 0) throw new UsageError(`--arg takes key=value, got ${JSON.stringify(text)}`, { file });
  return { key: text.slice(0, at), value: text.slice(at + 1) };
}

function parse<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O, command: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error, command));
  }
}

/** Rewrites node:util's parseArgs errors into one short line. */
function describeParseError(error: unknown, command: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const option = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option} for runvil ${command}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (message.includes('argument missing')) return `option ${option} needs a value`;
    if (message.includes('ambiguous')) return `option ${option} needs a value; for one that starts with a dash write ${option}=VALUE`;
    return `option ${option} takes no value`;
  }
  return message;
}

function unknownCommand(name: string): UsageError {
  return new UsageError(`unknown command ${JSON.stringify(name)}; the commands are ${listed('and')}`);
}

/** The commands but help, as a list in words: `run, check, ... or deploy-check`. */
function listed(last: 'and' | 'or'): string {
  const names = COMMANDS.filter((name) => name !== 'help');
  return `${names.slice(0, -1).join(', ')} ${last} ${names.at(-1)!}`;
}
