/**
 * Which deployed prompts `/mcp` serves, under which tool names (runvil.yaml's `mcp.tools`,
 * else every prompt under its own name), and what is left out and why (`GET /mcp/tools`).
 * A tool's `inputSchema` is built from the prompt's `args:` (JSON Schema 2020-12).
 */
import type { Json } from '../../json/json.ts';
import { splitDefinitions } from '../../prompt/arg-schema.ts';
import type { ArgSpec } from '../../prompt/types.ts';
import { MCP_TOOL_NAME } from '../../config/mcp-config.ts';
import { deploymentConfig } from '../deployment/deployment.ts';
import { findPrompt, listPrompts, parseDeployed, type DeployedPrompt } from '../deployment/prompt-library.ts';
import type { KvNamespace } from '../platform-types.ts';

/** A prompt served as an MCP tool. */
export interface ServedTool {
  /** The MCP tool name. */
  name: string;
  /** The deployed prompt it runs. */
  prompt: string;
  description: string;
  inputSchema: { type: 'object'; [keyword: string]: Json };
  /** The prompt as it was read (a call starts its run with it, not reading it again). */
  deployed: DeployedPrompt;
}

/** A tool name that is not served, and why. */
export interface LeftOutTool {
  name: string;
  prompt: string;
  reason: string;
}

/** What `/mcp` serves: the tools, by name in order, and what it leaves out. */
export interface ServedTools {
  served: ServedTool[];
  leftOut: LeftOutTool[];
}

const JSON_SCHEMA_TYPE: Record<ArgSpec['type'], Json | undefined> = {
  string: 'string',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
  json: undefined,
};

/**
 * The `inputSchema` of a prompt's `args:`: every arg without a default is required; a `json`
 * arg takes any value, or what its `schema:` says, as it stands, its `$defs` lifted to the
 * top (src/prompt/arg-schema.ts: the frontmatter refuses two args defining one name two ways).
 */
export function inputSchemaOf(args: Record<string, ArgSpec>): ServedTool['inputSchema'] {
  const properties: { [name: string]: Json } = {};
  const required: string[] = [];
  const defs: { [name: string]: Json } = {};
  for (const [name, spec] of Object.entries(args)) {
    const type = JSON_SCHEMA_TYPE[spec.type];
    const given = spec.schema !== undefined ? splitDefinitions(spec.schema) : null;
    if (given) Object.assign(defs, given.defs);
    properties[name] = {
      ...(given ? given.property : {}),
      ...(type !== undefined ? { type } : {}),
      ...(spec.description !== undefined ? { description: spec.description } : {}),
      ...(spec.default !== undefined ? { default: spec.default } : {}),
    };
    if (spec.default === undefined) required.push(name);
  }
  return {
    type: 'object',
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}),
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** The tools `/mcp` serves (for every caller; tools/list then keeps those the caller may run), and those it leaves out. */
export async function servedTools(kv: KvNamespace): Promise<ServedTools> {
  const mapped = deploymentConfig().mcp?.tools ?? null;
  const listed = await listPrompts(kv);
  const wanted: [string, string][] = mapped ? [...mapped] : listed.map((prompt) => [prompt.name, prompt.name]);
  const served: ServedTool[] = [];
  const leftOut: LeftOutTool[] = [];
  for (const [name, promptName] of wanted) {
    const outcome = await toolOf(kv, name, promptName);
    if ('reason' in outcome) leftOut.push(outcome);
    else served.push(outcome);
  }
  if (mapped) {
    for (const prompt of listed) {
      if (![...mapped.values()].includes(prompt.name))
        leftOut.push({ name: prompt.name, prompt: prompt.name, reason: "runvil.yaml's mcp.tools does not name it" });
    }
  }
  return { served, leftOut };
}

/** The served tool named `name`, or null when `/mcp` serves no such tool. */
export async function servedTool(kv: KvNamespace, name: string): Promise<ServedTool | null> {
  const promptName = promptOfTool(name);
  if (promptName === null) return null;
  const outcome = await toolOf(kv, name, promptName);
  return 'reason' in outcome ? null : outcome;
}

/** The prompt tool `name` runs by runvil.yaml's `mcp.tools` (or its own name), without reading it: null when the name serves none. */
export function promptOfTool(name: string): string | null {
  const mapped = deploymentConfig().mcp?.tools ?? null;
  const promptName = mapped ? (mapped.get(name) ?? null) : name;
  return promptName !== null && MCP_TOOL_NAME.test(name) ? promptName : null;
}

async function toolOf(kv: KvNamespace, name: string, promptName: string): Promise<ServedTool | LeftOutTool> {
  // A prompt's own name may hold characters MCP's tool names do not (none today), so it is checked too.
  if (!MCP_TOOL_NAME.test(name)) return { name, prompt: promptName, reason: 'its name is not an MCP tool name' };
  const deployed = await findPrompt(kv, promptName);
  if (!deployed) return { name, prompt: promptName, reason: `no prompt named ${promptName} is deployed` };
  try {
    const prompt = parseDeployed(deployed.name, deployed.source);
    return { name, prompt: promptName, description: prompt.frontmatter.description, inputSchema: inputSchemaOf(prompt.frontmatter.args), deployed };
  } catch {
    return { name, prompt: promptName, reason: 'the prompt does not parse' };
  }
}
