/**
 * `mcp:` of runvil.yaml (DESIGN.md Part 3, "Prompts as MCP tools"): which prompts `/mcp`
 * serves and under which tool names, and the resources prompts serve (mcp-resources.ts). Without it every prompt is served under its own name.
 * Whether a named prompt is deployed is known only at run time (prompts are uploaded too):
 * `GET /mcp/tools` lists a tool whose prompt is missing as left out, and why.
 */
import { readMcpResources, type McpResource, type RawMcpResource } from './mcp-resources.ts';
import { pathText } from './yaml-shape.ts';

/** `mcp:` as written: `tools` maps an MCP tool name to a prompt's name; `resources` a URI (template) to a prompt (mcp-resources.ts). */
export interface RawMcpConfig {
  tools?: Record<string, string>;
  resources?: Record<string, RawMcpResource>;
}

/** `mcp:`, checked. */
export interface McpConfig {
  /** MCP tool name -> prompt name, in file order; null: every prompt under its own name. */
  tools: ReadonlyMap<string, string> | null;
  /** Resources and resource templates backed by prompts, in file order (besides the runs' files); absent: none declared. */
  resources?: readonly McpResource[];
}

/** MCP's tool name grammar (2025-11-25, "Tool names"): 1 to 128 of letters, digits, `_`, `-` and `.`. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** A prompt's name, as the frontmatter's `name` allows it. */
const PROMPT_NAME = /^[a-z0-9-]{1,64}$/;

/** Reads `mcp:`; each problem is reported at its place (`key` for a tool name). */
export function readMcpConfig(raw: RawMcpConfig, report: (path: (string | number)[], message: string, key?: 'key') => void): McpConfig {
  const resources = raw.resources === undefined ? {} : { resources: readMcpResources(raw.resources, report) };
  if (raw.tools === undefined) return { tools: null, ...resources };
  const tools = new Map<string, string>();
  for (const [tool, prompt] of Object.entries(raw.tools)) {
    const at = ['mcp', 'tools', tool];
    if (!MCP_TOOL_NAME.test(tool)) {
      report(at, `\`${pathText(at)}\`: ${JSON.stringify(tool)} is not an MCP tool name (1 to 128 letters, digits, _, - and .)`, 'key');
    } else if (!PROMPT_NAME.test(prompt)) {
      report(at, `\`${pathText(at)}\`: ${JSON.stringify(prompt)} is not a prompt name (lowercase letters, digits and '-')`);
    } else {
      tools.set(tool, prompt);
    }
  }
  if (Object.keys(raw.tools).length === 0) report(['mcp', 'tools'], '`mcp.tools` is empty: leave it out to serve every prompt under its own name');
  return { tools, ...resources };
}
