/**
 * What an MCP tool's result becomes in a run (DESIGN.md Part 2, "MCP servers as Packs"):
 * the text parts of `content` joined with a newline, other parts as a short placeholder
 * (`[image image/png]`, `[resource <uri>]`); on a structured tool (a trusted Pack's tool
 * with an `outputSchema`) its `structuredContent`; `isError: true` a tool failure whose
 * model-safe message is its text.
 */
import type { Json } from '../../../json/json.ts';
import type { ToolOutcome } from '../../pack.ts';

/** A content part as a server sends it (only the fields read here). */
interface ContentPart {
  type?: unknown;
  text?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  resource?: { uri?: unknown };
}

/** The text of a result's content: text parts as they are, others as a placeholder. */
export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content.map((part: ContentPart) => partText(part)).join('\n');
}

function partText(part: ContentPart): string {
  switch (part?.type) {
    case 'text':
      return typeof part.text === 'string' ? part.text : '';
    case 'image':
    case 'audio':
      return `[${part.type} ${typeof part.mimeType === 'string' ? part.mimeType : 'unknown'}]`;
    case 'resource':
      return `[resource ${typeof part.resource?.uri === 'string' ? part.resource.uri : 'unknown'}]`;
    case 'resource_link':
      return `[resource ${typeof part.uri === 'string' ? part.uri : 'unknown'}]`;
    default:
      return `[${typeof part?.type === 'string' ? part.type : 'unknown'} content]`;
  }
}

/** The outcome of a `tools/call` result for tool `toolId`; `structured` when the catalog made it a structured tool. */
export function toolOutcome(toolId: string, result: { content?: unknown; structuredContent?: unknown; isError?: unknown }, structured: boolean): ToolOutcome {
  if (result.isError === true) {
    const text = contentText(result.content).trim();
    return { ok: false, message: text === '' ? `${toolId}: the MCP server reported an error` : text };
  }
  if (structured) {
    // A structured tool answers one JSON value; a server that sent none gets its text parsed, as the spec allows.
    if (result.structuredContent !== undefined) return { ok: true, output: JSON.stringify(result.structuredContent as Json) };
    return { ok: false, message: `${toolId}: the MCP server sent no structured content` };
  }
  return { ok: true, output: contentText(result.content) };
}
