/**
 * The deployed prompts: those bundled from prompts/ at build time and those uploaded with
 * `PUT /prompts/:name`, which are validated with the same parser and stored in KV under
 * `prompts/{name}`. An uploaded prompt of the same name wins over a bundled one.
 */
import { parsePromptCached } from './parsed-prompts.ts';
import type { Prompt, PromptError } from '../../prompt/types.ts';
import { BUNDLED_PROMPTS } from './bundled-prompts.generated.ts';
import { ApiError } from '../http/http-error.ts';
import type { KvNamespace } from '../platform-types.ts';
import { kvKeys } from '../outbox/run-store-kv.ts';

/** A deployed prompt's text and where it comes from. */
export interface DeployedPrompt {
  name: string;
  source: string;
  origin: 'bundled' | 'uploaded';
}

/** One line of `GET /prompts`. */
export interface PromptListing {
  name: string;
  description: string;
  origin: 'bundled' | 'uploaded';
  updated_at: string | null;
}

/** What an uploaded prompt's KV entry carries beside its text. */
interface PromptMetadata {
  description: string;
  updated_at: string;
}

/** The grammar of a prompt name in a URL: the frontmatter's slug. */
const NAME = /^[a-z0-9][a-z0-9_-]{0,99}$/;

/** Refuses a URL's prompt name that no prompt could have. */
export function checkPromptName(name: string): void {
  if (!NAME.test(name)) {
    throw new ApiError(404, `no prompt named ${JSON.stringify(name)}: prompt names are lowercase letters, digits, - and _`);
  }
}

/** The prompt named `name`, or null. */
export async function findPrompt(kv: KvNamespace, name: string): Promise<DeployedPrompt | null> {
  if (!NAME.test(name)) return null;
  const uploaded = await kv.get(kvKeys.prompt(name));
  if (uploaded !== null) return { name, source: uploaded, origin: 'uploaded' };
  const bundled = Object.hasOwn(BUNDLED_PROMPTS, name) ? BUNDLED_PROMPTS[name] : undefined;
  return bundled === undefined ? null : { name, source: bundled, origin: 'bundled' };
}

/** Every deployed prompt, sorted by name. */
export async function listPrompts(kv: KvNamespace): Promise<PromptListing[]> {
  const byName = new Map<string, PromptListing>();
  for (const [name, source] of Object.entries(BUNDLED_PROMPTS)) {
    const parsed = parsePromptCached(source, `${name}.md`);
    byName.set(name, { name, description: parsed.ok ? parsed.prompt.frontmatter.description : '', origin: 'bundled', updated_at: null });
  }
  let cursor: string | undefined;
  do {
    const page = await kv.list<PromptMetadata>({ prefix: kvKeys.prompt(''), ...(cursor ? { cursor } : {}) });
    for (const key of page.keys) {
      const name = key.name.slice(kvKeys.prompt('').length);
      byName.set(name, { name, description: key.metadata?.description ?? '', origin: 'uploaded', updated_at: key.metadata?.updated_at ?? null });
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Parses a deployed prompt's text; a text that does not parse is a 400 that lists every error with its line. */
export function parseDeployed(name: string, source: string): Prompt {
  const parsed = parsePromptCached(source, `${name}.md`);
  if (!parsed.ok) {
    const errors = parsed.errors.map(describeError);
    const first = parsed.errors[0];
    const where = first?.line === undefined ? '' : `line ${first.line}: `;
    throw new ApiError(400, `the prompt does not parse: ${where}${first?.message ?? 'no title'}`, { errors });
  }
  if (parsed.prompt.frontmatter.name !== name) {
    throw new ApiError(
      400,
      `the prompt's frontmatter names it ${JSON.stringify(parsed.prompt.frontmatter.name)}, but it is deployed as ${JSON.stringify(name)}; the two must match`,
    );
  }
  return parsed.prompt;
}

/** Validates and stores an uploaded prompt; answers whether it replaced an uploaded one. */
export async function savePrompt(kv: KvNamespace, name: string, source: string): Promise<{ prompt: Prompt; replaced: boolean }> {
  checkPromptName(name);
  const prompt = parseDeployed(name, source);
  const replaced = (await kv.get(kvKeys.prompt(name))) !== null;
  const metadata: PromptMetadata = { description: prompt.frontmatter.description.slice(0, 200), updated_at: new Date().toISOString() };
  await kv.put(kvKeys.prompt(name), source, { metadata });
  return { prompt, replaced };
}

function describeError(error: PromptError): { kind: string; message: string; line: number | null; column: number | null } {
  return { kind: error.kind, message: error.message, line: error.line ?? null, column: error.column ?? null };
}
