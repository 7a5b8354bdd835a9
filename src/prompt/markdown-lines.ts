/**
 * The few CommonMark line rules a prompt's structure depends on: fenced code blocks, ATX
 * headings, and HTML comments. A fence hides headings (a `## x` line inside any fence is
 * code), and so does a comment, which is how authors comment out a section.
 */

/** An opening code fence: its character, length, indentation and info string. */
export interface Fence {
  char: '`' | '~';
  length: number;
  indent: number;
  info: string;
}

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/** Reads a line as an opening fence (0-3 spaces, 3+ backticks or tildes, an info string). */
export function fenceOpening(line: string): Fence | undefined {
  const match = FENCE_OPEN.exec(line);
  if (!match) return undefined;
  const [, indent = '', run = '', rest = ''] = match;
  const char = run[0] === '~' ? '~' : '`';
  // CommonMark: a backtick fence's info string may not contain a backtick (it is inline code).
  if (char === '`' && rest.includes('`')) return undefined;
  return { char, length: run.length, indent: indent.length, info: rest.trim() };
}

/** Whether a line closes `fence`: the same character, at least as long, nothing after it. */
export function closesFence(line: string, fence: Fence): boolean {
  const match = /^ {0,3}(`+|~+)[ \t]*$/.exec(line);
  const run = match?.[1];
  return run !== undefined && run[0] === fence.char && run.length >= fence.length;
}

/** A content line of a fenced block, with up to the fence's indentation removed. */
export function fenceContent(line: string, fence: Fence): string {
  let cut = 0;
  while (cut < fence.indent && line[cut] === ' ') cut++;
  return line.slice(cut);
}

/** Reads a line as an ATX heading: its level (1-6) and raw text, closing `#`s removed. */
export function atxHeading(line: string): { level: number; text: string } | undefined {
  const match = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/.exec(line);
  if (!match) return undefined;
  const [, hashes = '', rest = ''] = match;
  const text = rest.replace(/(?:^|[ \t]+)#+[ \t]*$/, '').trim();
  return { level: hashes.length, text };
}

/** A line with its HTML comments cut out. */
export interface CommentScan {
  /** The text outside comments. */
  text: string;
  /** Whether the line ends inside a comment that continues on the next line. */
  open: boolean;
  /** Whether any part of the line was a comment. */
  hadComment: boolean;
}

/**
 * Cuts `<!-- ... -->` comments out of a line of prose. `open` says the line starts inside a
 * comment. Inline code spans are skipped, so prose can mention `<!--` in backticks.
 */
export function stripComments(line: string, open: boolean): CommentScan {
  let text = '';
  let hadComment = open;
  let i = 0;
  while (i < line.length) {
    if (open) {
      const end = line.indexOf('-->', i);
      if (end === -1) return { text, open: true, hadComment };
      i = end + 3;
      open = false;
      continue;
    }
    if (line.startsWith('<!--', i)) {
      hadComment = true;
      open = true;
      // Searching from the second '-' lets `<!-->` and `<!--->` close themselves (CommonMark).
      const end = line.indexOf('-->', i + 2);
      if (end === -1) return { text, open: true, hadComment };
      i = end + 3;
      open = false;
      continue;
    }
    if (line[i] === '`') {
      const span = codeSpanEnd(line, i);
      text += line.slice(i, span);
      i = span;
      continue;
    }
    text += line[i];
    i++;
  }
  return { text, open, hadComment };
}

/** The end of the backtick run at `start`, or of the code span it opens on this line. */
function codeSpanEnd(line: string, start: number): number {
  let runEnd = start;
  while (line[runEnd] === '`') runEnd++;
  const length = runEnd - start;
  let i = runEnd;
  while (i < line.length) {
    if (line[i] !== '`') {
      i++;
      continue;
    }
    let close = i;
    while (line[close] === '`') close++;
    if (close - i === length) return close;
    i = close;
  }
  // An unmatched run is literal backticks.
  return runEnd;
}
