/**
 * Compiling a prompt's Lua without running it, wherever a prompt is let in (the upload,
 * `runvil check`, the build): every ```lua block and every `{{ expression }}` in prose goes
 * through Lua's own `load`, so a syntax error is found before a run reaches it, placed at
 * its line and column in the prompt file (syntax-place.ts).
 */
import type { Prompt, PromptError, SectionBody } from '../../prompt/types.ts';
import type { LuaVm, RuntimeChunk } from './lua-vm.ts';
import type { LuaPlatform } from './platform.ts';
import { placeSyntaxError, positionOf, type SyntaxPlace } from './syntax-place.ts';

/** A syntax problem, placed like a parse error (its kind is the run error kind `Lua`). */
export interface LuaSyntaxError extends Omit<PromptError, 'kind'> {
  kind: 'Lua';
}

// Compiles its first argument under the chunk name in its second and answers load's error, if any.
const COMPILE: RuntimeChunk = {
  name: 'runvil-check-compile',
  source: "local source, name = ...\nlocal _, err = load(source, name, 't')\nreturn err",
};

/** What `return ` in front of a prose expression adds to its columns. */
const RETURN = 'return ';

/**
 * The Lua syntax errors of a parsed prompt, in file order. `text` is the prompt file's text,
 * which places an error in a prose expression; without it such an error has its section's line.
 * One VM compiles them all and is closed after.
 */
export async function luaSyntaxErrors(platform: LuaPlatform, prompt: Prompt, text?: string): Promise<LuaSyntaxError[]> {
  const vm = await platform.newVm();
  try {
    return compileErrors(vm, prompt, text);
  } finally {
    vm.close();
  }
}

function compileErrors(vm: LuaVm, prompt: Prompt, text: string | undefined): LuaSyntaxError[] {
  const errors: LuaSyntaxError[] = [];
  const file = prompt.file;
  const compiler = (name: string) => (source: string) => {
    const problem = vm.runChunk(COMPILE, [source, `=${name}`])[0];
    return typeof problem === 'string' ? problem : null;
  };
  const compileBlock = compiler('block');
  const compileProse = compiler('prose');
  const bodies: { body: SectionBody; heading: string; line?: number }[] = [
    { body: prompt.h1, heading: `# ${prompt.title}`, ...(prompt.h1.prologue[0] ? { line: prompt.h1.prologue[0].line } : {}) },
    ...prompt.sections.map((section) => ({ body: section, heading: `## ${section.name}`, line: section.line })),
  ];
  for (const { body, heading, line } of bodies) {
    for (const block of [...body.prologue, ...body.epilogue]) {
      // Blank lines in front keep Lua's line numbers those of the prompt file, as the Engine does.
      const source = '\n'.repeat(block.line - 1) + block.source;
      const problem = compileBlock(source);
      if (problem === null) continue;
      const place = placeSyntaxError(source, 'block', problem, compileBlock);
      errors.push(
        place
          ? { kind: 'Lua', file, line: place.line, column: place.column, message: place.message }
          : { kind: 'Lua', file, line: block.line, message: problem },
      );
    }
    for (const expression of proseExpressions(body.prose)) {
      const source = RETURN + expression;
      const problem = compileProse(source);
      if (problem === null) continue;
      const place = placeSyntaxError(source, 'prose', problem, compileProse);
      const message = `in the prose expression {{${expression}}} of ${heading}: ${place?.message ?? problem}`;
      const where = proseWhere(text, expression, line, place);
      errors.push({ kind: 'Lua', file, ...where, message });
    }
  }
  return errors.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

/** Where in the file a prose expression's error is: found in the file's text from its section's line on. */
function proseWhere(
  text: string | undefined,
  expression: string,
  sectionLine: number | undefined,
  place: SyntaxPlace | null,
): { line?: number; column?: number } {
  const fallback = sectionLine === undefined ? {} : { line: sectionLine };
  if (text === undefined) return fallback;
  const from = sectionLine === undefined ? 0 : offsetOfLine(text, sectionLine);
  const at = text.indexOf(`{{${expression}}}`, from);
  if (at < 0) return fallback;
  const within = place === null ? 0 : Math.min(Math.max(place.offset - RETURN.length, 0), expression.length);
  return positionOf(text, at + 2 + within);
}

function offsetOfLine(text: string, line: number): number {
  let at = 0;
  for (let n = 1; n < line; n++) {
    const next = text.indexOf('\n', at);
    if (next < 0) return at;
    at = next + 1;
  }
  return at;
}

/** The `{{ ... }}` expressions of prose, found the way the Engine finds them. */
function proseExpressions(prose: string): string[] {
  const found: string[] = [];
  let at = 0;
  for (;;) {
    const open = prose.indexOf('{{', at);
    if (open < 0) return found;
    const close = prose.indexOf('}}', open + 2);
    if (close < 0) return found;
    found.push(prose.slice(open + 2, close));
    at = close + 2;
  }
}
