/**
 * The cap on one tool output: checked before the output is journaled or handed to a VM,
 * whatever Pack answered it, and counted on the wire by the Packs whose answers come from
 * outside (an MCP server, an HTTP tool service), so an answer past it is never read whole.
 * Past the cap the run ends with `Limit`, naming the Pack, the tool and the cap.
 */
import { utf8Length } from '../engine/run-meter.ts';
import { formatBytes } from '../engine/lua/run-memory.ts';
import type { ToolOutcome } from './pack.ts';

/**
 * The most bytes (UTF-8) one tool output may take: 1 MiB. A section VM holds 16 MiB
 * (DEFAULT_LIMITS.memoryBytes), and an output lives there more than once (the text, its
 * untrusted envelope, a structured output decoded into tables several times its size, the
 * conversation a model round sends); 1 MiB also passes any model's context window, so nothing
 * useful is lost, and it is what the callback route takes as a body (src/worker/http/body.ts).
 */
export const TOOL_OUTPUT_BYTES = 1024 * 1024;

/**
 * The most bytes of the answer that carries one output a Pack reads off the wire, for an
 * output cap of `cap`: eight times it. JSON escapes text in up to 6 bytes a character
 * (`\u00e9`: 2 bytes of UTF-8; `\u0001`: 1), and an MCP structured result carries its output
 * twice (`structuredContent`, and its text in `content`). The output itself is measured
 * exactly once it is read.
 */
export const answerBytesFor = (cap: number): number => cap * 8;

/** The Limit outcome of tool `tool` of Pack `pack` (its fully qualified name) answering past `cap`. */
export function outputCapExceeded(pack: string, tool: string, cap: number): ToolOutcome & { ok: false } {
  return {
    ok: false,
    limit: true,
    message: `the tool ${tool} of the Pack ${pack} answered more than the cap of ${formatBytes(cap)} on one tool output`,
  };
}

/** `outcome`, or the Limit outcome when its output passes `cap`. */
export function capOutput(outcome: ToolOutcome, pack: string, tool: string, cap = TOOL_OUTPUT_BYTES): ToolOutcome {
  // The UTF-16 length bounds the UTF-8 length from below: most outputs need no count.
  if (!outcome.ok || outcome.output.length * 3 <= cap) return outcome;
  return outcome.output.length > cap || utf8Length(outcome.output) > cap ? outputCapExceeded(pack, tool, cap) : outcome;
}
