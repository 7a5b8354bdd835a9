/**
 * Parses a prompt file: the frontmatter, then the Markdown body's `# Title`, H1 body and
 * `##` sections. Every error found is reported, not only the first, because `runvil check`
 * lists them all.
 */
import { parseFrontmatter, splitFrontmatter } from './frontmatter.ts';
import { scanOutline } from './outline.ts';
import { splitBody } from './section-body.ts';
import type { Frontmatter, ParseResult, PromptError } from './types.ts';

/** Parses a prompt's text; `file` only names it in errors. */
export function parsePrompt(text: string, file = '<inline>'): ParseResult {
  // CommonMark's line endings; a byte order mark is not part of the first line.
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const errors: PromptError[] = [];
  let frontmatter: Frontmatter | undefined;

  const block = splitFrontmatter(lines);
  if (block.ok) {
    const result = parseFrontmatter(block.yaml, file, block.yamlLine);
    if (result.ok) frontmatter = result.frontmatter;
    else errors.push(...result.errors);
  } else {
    const { message, line, column } = block;
    errors.push({ kind: 'Frontmatter', message, file, line, column });
  }

  if (block.bodyLine === undefined) return { ok: false, errors };
  const outline = scanOutline(lines.slice(block.bodyLine - 1), block.bodyLine);
  const bodyErrors = outline.errors.map(({ message, line }): PromptError => {
    return line === undefined ? { kind: 'Prompt', message, file } : { kind: 'Prompt', message, file, line };
  });
  errors.push(...bodyErrors.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity)));

  if (errors.length > 0 || !frontmatter || !outline.title) return { ok: false, errors };
  return {
    ok: true,
    prompt: {
      file,
      frontmatter,
      title: outline.title.text,
      h1: splitBody(outline.h1),
      sections: outline.sections.map(({ name, line, items }) => ({ name, line, ...splitBody(items) })),
    },
  };
}
