/**
 * `runvil check runvil.yaml [PROMPT.md...]`: each trigger of the file against the prompt it
 * starts (src/config/trigger-prompt-check.ts). The prompt is looked for by its deployed
 * name as the Worker finds it: first among the prompt files on the command line (by their
 * frontmatter `name`), else `prompts/<name>.md` beside runvil.yaml, the directory the
 * Worker bundles. A prompt found nowhere is an error: one deployed by `PUT /prompts/<name>`
 * is checked by giving its file on the command line.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DeploymentConfig, Trigger } from '../config/deployment-config.ts';
import { configPlaces, type ConfigPlaces, type ConfigProblem } from '../config/parse-config.ts';
import { triggerPromptProblems, type TriggeredPrompt } from '../config/trigger-prompt-check.ts';
import { pathText } from '../config/yaml-shape.ts';
import { parsePrompt } from '../prompt/index.ts';
import { isConfigFile } from './config-file.ts';
import type { CliIo } from './io.ts';
import { formatError } from './prompt-file.ts';

/** Checks the triggers of `config` (read from `file`, whose text is `text`) against their prompts; 1 when any has a problem, else 0. */
export async function checkTriggers(file: string, text: string, config: DeploymentConfig, files: readonly string[], io: CliIo): Promise<number> {
  if (config.triggers.size === 0) return 0;
  const places = configPlaces(text);
  if (places === null) return 0;
  const given = await givenPrompts(files);
  const problems: ConfigProblem[] = [];
  for (const trigger of config.triggers.values()) {
    const found = given.get(trigger.prompt) ?? (await bundledPrompt(file, trigger, places));
    if ('message' in found) problems.push(found);
    else problems.push(...triggerPromptProblems(trigger, found, places));
  }
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  for (const problem of problems) io.err(`${formatError({ kind: 'Config', file, ...problem })}\n`);
  return problems.length > 0 ? 1 : 0;
}

/** The prompt files on the command line that parse, by their frontmatter name (the rest are reported by their own check). */
async function givenPrompts(files: readonly string[]): Promise<Map<string, TriggeredPrompt>> {
  const prompts = new Map<string, TriggeredPrompt>();
  for (const file of files) {
    if (isConfigFile(file) || /\.test\.ya?ml$/i.test(file)) continue;
    const text = await readFile(file, 'utf8').catch(() => null);
    const parsed = text === null ? null : parsePrompt(text, file);
    if (parsed?.ok && !prompts.has(parsed.prompt.frontmatter.name))
      prompts.set(parsed.prompt.frontmatter.name, { name: parsed.prompt.frontmatter.name, args: parsed.prompt.frontmatter.args });
  }
  return prompts;
}

/** The prompt `prompts/<name>.md` beside runvil.yaml, or the problem placed at the trigger's `prompt`. */
async function bundledPrompt(configFile: string, trigger: Trigger, places: ConfigPlaces): Promise<TriggeredPrompt | ConfigProblem> {
  const at = ['triggers', trigger.name, 'prompt'];
  const problem = (message: string): ConfigProblem => ({ ...places.place(at), message: `\`${pathText(at)}\`: ${message}` });
  const path = join(dirname(configFile), 'prompts', `${trigger.prompt}.md`);
  if (!existsSync(path))
    return problem(
      `no prompt ${trigger.prompt}: it is not among the prompt files given, and there is no ${path}; for a prompt deployed with PUT /prompts/${trigger.prompt}, give its file to runvil check too`,
    );
  const parsed = parsePrompt(await readFile(path, 'utf8'), path);
  if (!parsed.ok) return problem(`prompt ${trigger.prompt} (${path}) does not parse: run runvil check ${path}`);
  const name = parsed.prompt.frontmatter.name;
  if (name !== trigger.prompt)
    return problem(`${path} is deployed as ${trigger.prompt}, but its frontmatter names it ${name}; the Worker refuses a prompt whose two names differ`);
  return { name, args: parsed.prompt.frontmatter.args };
}
