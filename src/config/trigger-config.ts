/**
 * The `triggers:` of runvil.yaml (DESIGN.md Part 3, "Triggers"): the rules its schema does
 * not state. A trigger's name is the last part of `POST /hooks/<name>`, so it has a prompt
 * name's grammar; its secret is one `${NAME}` and never one of the server's own (the sender
 * holds the secret too); its event filter is a non-empty list of event types without
 * spaces; each arg's JSON path is compiled now (trigger-paths.ts), so a path that is no
 * RFC 9535 path is an error at its line rather than at a delivery.
 */
import { TRIGGER_SENDERS, type Trigger, type TriggerArg, type TriggerSender } from './deployment-config.ts';
import { serverSecretOf } from './server-secrets.ts';
import { compileArgPath } from './trigger-paths.ts';
import { pathText } from './yaml-shape.ts';

/** A trigger as the schema lets it through. */
export interface RawTrigger {
  prompt?: string;
  from?: TriggerSender;
  secret?: string;
  events?: string[];
  args?: Record<string, string>;
}

type Path = (string | number)[];

/** Records a problem at the value of `path`, or at its key when `key` is set. */
export type TriggerReport = (path: Path, message: string, key?: 'key') => void;

/** A trigger's name (it becomes `/hooks/<name>`) and the prompt it names: a prompt name's grammar. */
const ROUTE_NAME = /^[a-z0-9-]{1,64}$/;
/** A prompt's arg name, as the frontmatter's `args:` allows it. */
const ARG_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** A string that is exactly one `${NAME}` reference. */
const ONE_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
/** Anything that cannot be part of an event type: the senders' types have no spaces. */
const NOT_IN_EVENT = /[\s\p{Cc}]/u;

/**
 * Checks one `triggers:` entry; the trigger, or null when it has a problem (each reported).
 * `place` is where the trigger's key is written (1-based).
 */
export function readTrigger(name: string, raw: RawTrigger, place: { line: number; column: number }, report: TriggerReport): Trigger | null {
  const at: Path = ['triggers', name];
  const where = `\`${pathText(at)}\``;
  let ok = true;
  const fail = (path: Path, message: string, key?: 'key') => {
    report(path, message, key);
    ok = false;
  };
  if (!ROUTE_NAME.test(name))
    fail(at, `${where}: ${JSON.stringify(name)} is not a trigger name: it becomes /hooks/<name>, so lowercase letters, digits and '-' (at most 64)`, 'key');

  if (raw.prompt === undefined) fail(at, `${where} needs a \`prompt\`: the prompt its deliveries start`, 'key');
  else if (!ROUTE_NAME.test(raw.prompt))
    fail([...at, 'prompt'], `\`${pathText([...at, 'prompt'])}\`: ${JSON.stringify(raw.prompt)} is not a prompt name (lowercase letters, digits and '-')`);

  if (raw.from === undefined) fail(at, `${where} needs \`from\`: the sender, one of ${TRIGGER_SENDERS.join(', ')}`, 'key');

  if (raw.secret === undefined)
    fail(at, `${where} needs a \`secret\` (\${NAME} of the signing secret the sender was given): every delivery is checked against it`, 'key');
  else secretIsReference(raw.secret, [...at, 'secret'], fail);

  if (raw.events !== undefined) {
    if (raw.events.length === 0) fail([...at, 'events'], `\`${pathText([...at, 'events'])}\` is empty: leave it out to start a run for every event`);
    raw.events.forEach((event, index) => {
      if (event === '' || NOT_IN_EVENT.test(event))
        fail(
          [...at, 'events', index],
          `\`${pathText([...at, 'events', index])}\`: ${JSON.stringify(event)} is not an event type: a type, or type.action, such as issues.opened, with no spaces`,
        );
    });
  }

  let args: TriggerArg[] | null = null;
  if (raw.args !== undefined) {
    args = [];
    for (const [arg, text] of Object.entries(raw.args)) {
      const argAt = [...at, 'args', arg];
      if (!ARG_NAME.test(arg)) {
        fail(argAt, `\`${pathText(argAt)}\`: ${JSON.stringify(arg)} is not an arg name (a letter, then letters, digits, '_' and '-')`, 'key');
        continue;
      }
      const compiled = compileArgPath(text);
      if (!compiled.ok) fail(argAt, `\`${pathText(argAt)}\`: the path of arg ${arg}: ${compiled.message}`);
      else args.push({ name: arg, path: text });
    }
    if (Object.keys(raw.args).length === 0)
      fail([...at, 'args'], `\`${pathText([...at, 'args'])}\` is empty: leave it out to give the whole payload as the single arg payload`);
  }

  if (!ok || raw.prompt === undefined || raw.from === undefined || raw.secret === undefined) return null;
  return { name, prompt: raw.prompt, from: raw.from, secret: raw.secret, events: raw.events ?? null, args, line: place.line, column: place.column };
}

/** Whether `secret` is one `${NAME}` that is not one of the server's own secrets; reports why not. */
function secretIsReference(secret: string, at: Path, fail: TriggerReport): boolean {
  const reference = ONE_REFERENCE.exec(secret);
  if (reference === null) {
    fail(at, `\`${pathText(at)}\` must name an environment variable, such as \${GITHUB_WEBHOOK_SECRET}: secrets never live in runvil.yaml`);
    return false;
  }
  const what = serverSecretOf(reference[1]!);
  if (what === null) return true;
  fail(
    at,
    `\`${pathText(at)}\`: \${${reference[1]}} is ${what}, one of the server's own secrets: the sender would hold it too; give the trigger a secret of its own`,
  );
  return false;
}
