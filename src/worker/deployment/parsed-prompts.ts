/**
 * Parsed prompts, kept per isolate. Parsing a prompt (its YAML frontmatter above all) costs
 * about half a millisecond in workerd, and every run start and every resume of a run object
 * parses the run's prompt. Keyed by file name and text, so a prompt uploaded with new text
 * parses afresh. A cached prompt is frozen, since runs of every run object share it.
 */
import { parsePrompt } from '../../prompt/parse.ts';

type ParseResult = ReturnType<typeof parsePrompt>;

/** The texts kept, in characters: a bound on the isolate memory the cache holds. */
const CHARACTER_BUDGET = 2_000_000;

const parsed = new Map<string, ParseResult>();
let characters = 0;

/** parsePrompt, answered from the isolate's cache when the same text was parsed before. */
export function parsePromptCached(text: string, file: string): ParseResult {
  const key = `${file}\n${text}`;
  const hit = parsed.get(key);
  if (hit) {
    // Most recently used last: eviction takes the oldest first.
    parsed.delete(key);
    parsed.set(key, hit);
    return hit;
  }
  const result = deepFreeze(parsePrompt(text, file));
  if (key.length > CHARACTER_BUDGET) return result;
  parsed.set(key, result);
  characters += key.length;
  for (const [oldest] of parsed) {
    if (characters <= CHARACTER_BUDGET) break;
    parsed.delete(oldest);
    characters -= oldest.length;
  }
  return result;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
