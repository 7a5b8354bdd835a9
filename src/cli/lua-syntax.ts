/**
 * Compiling a prompt's Lua without running it, for `runvil check`: every ```lua block and
 * every `{{ expression }}` in prose goes through Lua's own `load`, so a syntax error is
 * found before a run reaches it.
 */
import type { LuaPlatform, RuntimeChunk } from '../engine/lua/vm.ts';
import type { Prompt, PromptError, SectionBody } from '../prompt/types.ts';

/** A syntax problem, placed like a parse error (its kind is the run error kind `Lua`). */
export interface LuaSyntaxError extends Omit<PromptError, 'kind'> {
  kind: 'Lua';
}

// Compiles its first argument under the chunk name in its second and answers load's error, if any.
const COMPILE: RuntimeChunk = {
  name: 'runvil-check-compile',
  source: "local source, name = ...\nlocal _, err = load(source, name, 't')\nreturn err",
};

/** The Lua syntax errors of a parsed prompt, in file order. */
export async function luaSyntaxErrors(platform: LuaPlatform, prompt: Prompt): Promise<LuaSyntaxError[]> {
  const vm = await platform.newVm();
  const errors: LuaSyntaxError[] = [];
  const file = prompt.file;
  const compile = (source: string, name: string) => vm.runChunk(COMPILE, [source, name])[0];
  try {
    const bodies: { body: SectionBody; heading: string; line?: number }[] = [
      { body: prompt.h1, heading: `# ${prompt.title}`, ...(prompt.h1.prologue[0] ? { line: prompt.h1.prologue[0].line } : {}) },
      ...prompt.sections.map((section) => ({ body: section, heading: `## ${section.name}`, line: section.line })),
    ];
    for (const { body, heading, line } of bodies) {
      for (const block of [...body.prologue, ...body.epilogue]) {
        // Blank lines in front keep Lua's line numbers those of the prompt file, as the Engine does.
        const problem = compile('\n'.repeat(block.line - 1) + block.source, '=block');
        if (typeof problem === 'string') errors.push(placed(file, problem, block.line));
      }
      for (const expression of proseExpressions(body.prose)) {
        const problem = compile(`return ${expression}`, '=prose');
        if (typeof problem === 'string') {
          const message = problem.replace(/^prose:\d+: /, '');
          const where = line === undefined ? {} : { line };
          errors.push({ kind: 'Lua', file, ...where, message: `in the prose expression {{${expression}}} of ${heading}: ${message}` });
        }
      }
    }
  } finally {
    vm.close();
  }
  return errors.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

function placed(file: string, problem: string, fallbackLine: number): LuaSyntaxError {
  const match = /^block:(\d+): ([\s\S]*)$/.exec(problem);
  return match ? { kind: 'Lua', file, line: Number(match[1]), message: match[2]! } : { kind: 'Lua', file, line: fallbackLine, message: problem };
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
