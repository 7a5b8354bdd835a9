/**
 * Reads the Markdown body of a prompt into its outline: the `# Title`, the items of the H1
 * body, and each `##` section's items, with every structural error found on the way. The
 * scan goes line by line; fences and comments are tracked so that a `#` or `##` line
 * inside either is not a heading.
 */
import { atxHeading, closesFence, fenceContent, fenceOpening, stripComments, type CommentScan, type Fence } from './markdown-lines.ts';
import type { BodyItem } from './section-body.ts';

/** A `##` section before its body is split. */
export interface OutlineSection {
  name: string;
  line: number;
  items: BodyItem[];
}

/** A structural problem, at a 1-based file line when it has one. */
export interface OutlineError {
  message: string;
  line?: number;
}

/** The body's structure: title, H1 items, sections, and every error. */
export interface Outline {
  title?: { text: string; line: number };
  h1: BodyItem[];
  sections: OutlineSection[];
  errors: OutlineError[];
}

interface OpenFence {
  fence: Fence;
  line: number;
  lua: boolean;
  lines: string[];
}

/** Scans body lines; `firstLine` is the file line of `lines[0]`. */
export function scanOutline(lines: readonly string[], firstLine: number): Outline {
  const outline: Outline = { h1: [], sections: [], errors: [] };
  const error = (message: string, line?: number) => outline.errors.push(line === undefined ? { message } : { message, line });
  // null while before the first heading, where only blank lines and comments may stand.
  let items: BodyItem[] | null = null;
  let preambleText: number | undefined;
  let fence: OpenFence | undefined;
  let commentLine: number | undefined;
  // The text before a comment that runs past its line; it joins the text after the comment.
  let beforeComment = '';

  const addProse = (text: string, line: number) => {
    if (items) items.push({ type: 'prose', text });
    else if (text.trim() !== '') preambleText ??= line;
  };
  const addScanned = (scan: CommentScan, line: number) => {
    // A line that was only a comment leaves no blank line behind, so paragraphs stay joined.
    if (scan.hadComment && scan.text.trim() === '') return;
    addProse(scan.text, line);
  };

  lines.forEach((raw, index) => {
    const line = firstLine + index;
    if (fence) {
      if (closesFence(raw, fence.fence)) {
        if (fence.lua) items?.push({ type: 'lua', block: { source: fence.lines.join('\n'), line: fence.line + 1 } });
        else addProse(raw, line);
        fence = undefined;
      } else if (fence.lua) fence.lines.push(fenceContent(raw, fence.fence));
      else addProse(raw, line);
      return;
    }
    if (commentLine !== undefined) {
      const scan = stripComments(raw, true);
      if (scan.open) return;
      addScanned({ ...scan, text: beforeComment + scan.text }, commentLine);
      commentLine = undefined;
      return;
    }
    const heading = atxHeading(raw);
    if (heading && heading.level <= 2) {
      const scan = stripComments(heading.text, false);
      if (scan.open) [commentLine, beforeComment] = [line, ''];
      const name = scan.text.trim();
      if (heading.level === 1) items = openTitle(outline, name, line, error) ?? items;
      else items = openSection(outline, name, line, error);
      return;
    }
    const opening = fenceOpening(raw);
    if (opening) {
      fence = { fence: opening, line, lua: opening.info === 'lua', lines: [] };
      if (!items) preambleText ??= line;
      else if (!fence.lua) addProse(raw, line);
      return;
    }
    const scan = stripComments(raw, false);
    if (scan.open) [commentLine, beforeComment] = [line, scan.text];
    else addScanned(scan, line);
  });

  if (fence) {
    const what = fence.lua ? `${fence.fence.char.repeat(fence.fence.length)}lua block` : 'fenced code block';
    error(`this ${what} is never closed; end it with a ${fence.fence.char.repeat(fence.fence.length)} line`, fence.line);
  }
  if (commentLine !== undefined) error('this HTML comment is never closed; end it with -->', commentLine);
  if (!outline.title) error('the prompt has no `# Title` heading');
  else if (preambleText !== undefined) {
    error('only blank lines and HTML comments may come before the `# Title` heading', preambleText);
  }
  return outline;
}

/** Handles a `# ` line; returns the H1 items to fill, or undefined to keep the current ones. */
function openTitle(outline: Outline, name: string, line: number, error: (message: string, line?: number) => void): BodyItem[] | undefined {
  if (outline.title) {
    error(`a second \`# \` heading; a prompt has exactly one \`# Title\` heading (the first is on line ${outline.title.line})`, line);
    return undefined;
  }
  if (name === '') error("the `# Title` heading is empty; write the prompt's title after `# `", line);
  const first = outline.sections[0];
  if (first) error(`the \`# Title\` heading must come before every \`##\` section (the first is on line ${first.line})`, line);
  outline.title = { text: name, line };
  return outline.h1;
}

/** Handles a `## ` line: checks its name and starts the section. */
function openSection(outline: Outline, name: string, line: number, error: (message: string, line?: number) => void): BodyItem[] {
  if (name === '') error('a `##` heading needs a section name, such as `## Ask`', line);
  const twin = name === '' ? undefined : outline.sections.find((section) => section.name === name);
  if (twin) {
    error(`two sections are headed \`## ${name}\` (lines ${twin.line} and ${line}); headings must be unique`, line);
  }
  const section: OutlineSection = { name, line, items: [] };
  outline.sections.push(section);
  return section.items;
}
