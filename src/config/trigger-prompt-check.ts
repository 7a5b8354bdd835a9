/**
 * A trigger against the prompt it starts (DESIGN.md Part 3, "Triggers"), before any
 * delivery: every arg it takes by a path is one the prompt declares, and every arg the
 * prompt requires (no default) is one it can give, else every delivery would be refused
 * with a 400 naming that arg. Without `args:` the whole payload, a JSON object, is the
 * single arg `payload`, so the prompt must declare `payload` of type json. Platform-neutral:
 * `runvil check` applies it to the prompts it finds; each problem is placed in runvil.yaml.
 */
import type { Trigger } from './deployment-config.ts';
import type { ConfigPlaces, ConfigProblem } from './parse-config.ts';
import { pathText } from './yaml-shape.ts';
import type { ArgSpec } from '../prompt/types.ts';

/** What a required arg no trigger gives costs, in the messages. */
const REFUSED_AT_DELIVERY = 'every delivery would be refused with 400 naming it; ';

/** The prompt a trigger names, as its frontmatter declares its args. */
export interface TriggeredPrompt {
  name: string;
  args: Readonly<Record<string, ArgSpec>>;
}

/** Every problem of `trigger` with `prompt`, placed in runvil.yaml by `places`. */
export function triggerPromptProblems(trigger: Trigger, prompt: TriggeredPrompt, places: ConfigPlaces): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const at = ['triggers', trigger.name];
  const declared = new Map(Object.entries(prompt.args));
  const required = [...declared].filter(([, spec]) => spec.default === undefined).map(([name]) => name);
  const what = `trigger ${trigger.name}`;

  if (trigger.args === null) {
    const where = places.placeKey(at);
    const payload = declared.get('payload');
    if (payload === undefined)
      problems.push({
        ...where,
        message: `\`${pathText(at)}\`: without \`args:\`, ${what} gives the whole payload as the single arg payload, but prompt ${prompt.name} declares no arg payload: declare \`payload: { type: json }\` under the prompt's args:, or give the trigger \`args:\` paths`,
      });
    else if (payload.type !== 'json')
      problems.push({
        ...where,
        message: `\`${pathText(at)}\`: without \`args:\`, ${what} gives the whole payload, a JSON object, as arg payload, but prompt ${prompt.name} declares payload as ${payload.type}: declare it \`type: json\``,
      });
    for (const arg of required.filter((name) => name !== 'payload'))
      problems.push({
        ...where,
        message: `\`${pathText(at)}\`: without \`args:\`, ${what} gives only the arg payload, but prompt ${prompt.name} requires arg ${arg} (it has no default): ${REFUSED_AT_DELIVERY}give the trigger \`args:\` paths, or give ${arg} a default`,
      });
    return problems;
  }

  const given = new Set(trigger.args.map((arg) => arg.name));
  for (const arg of trigger.args) {
    if (declared.has(arg.name)) continue;
    const argAt = [...at, 'args', arg.name];
    const names = [...declared.keys()];
    const known = names.length === 0 ? 'it declares no args' : `it declares ${names.join(', ')}`;
    problems.push({
      ...places.place(argAt),
      message: `\`${pathText(argAt)}\`: ${what} gives arg ${arg.name} (${arg.path}), which prompt ${prompt.name} does not declare (${known}): declare it under the prompt's args:, or take this path out`,
    });
  }
  for (const arg of required.filter((name) => !given.has(name)))
    problems.push({
      ...places.placeKey([...at, 'args']),
      message: `\`${pathText([...at, 'args'])}\` gives no path for arg ${arg}, which prompt ${prompt.name} requires (it has no default): ${REFUSED_AT_DELIVERY}add a path for ${arg}, or give ${arg} a default in the prompt`,
    });
  return problems;
}
