/**
 * Third-party Packs described by a test file (`host.packs`): a manifest built from the
 * description and tools that answer their fixed output text or failure text.
 */
import type { Json } from '../prompt/types.ts';
import type { Pack, ToolManifest, ToolOutcome } from './pack.ts';

/** One fixture tool: its manifest fields and what every call to it answers. */
export interface FixtureToolSpec {
  /** The tool's own name; its tool id is `<pack id>/<name>`. */
  name: string;
  description?: string;
  /** JSON Schema of the arguments; `{ type: object, properties: {} }` by default. */
  parameters?: Json;
  /** `plain` by default. */
  output?: 'plain' | 'structured';
  /** True by default. */
  trusted?: boolean;
  /** The tool's output text. */
  returns?: string;
  /** The tool's model-safe failure text; wins over `returns`. */
  fails?: string;
}

/** One fixture Pack. */
export interface FixturePackSpec {
  description?: string;
  prelude?: string;
  tools?: FixtureToolSpec[];
}

/** The parameter schema of a tool that takes no arguments. */
export const NO_PARAMETERS: Json = { type: 'object', properties: {} };

/** Builds a Pack named `fqName` (such as `acme/stats`) from its fixture description. */
export function fixturePack(fqName: string, spec: FixturePackSpec): Pack {
  const packId = fqName.split('/').pop()!;
  const answers = new Map<string, ToolOutcome>();
  const tools: ToolManifest[] = (spec.tools ?? []).map((tool) => {
    const id = `${packId}/${tool.name}`;
    answers.set(id, tool.fails !== undefined ? { ok: false, message: tool.fails } : { ok: true, output: tool.returns ?? '' });
    return {
      id,
      description: tool.description ?? '',
      parameters: tool.parameters ?? NO_PARAMETERS,
      output: tool.output ?? 'plain',
      trusted: tool.trusted ?? true,
    };
  });
  return {
    manifest: {
      fqName,
      description: spec.description ?? `The fixture Pack ${fqName}`,
      tools,
      ...(spec.prelude !== undefined ? { prelude: spec.prelude } : {}),
    },
    async call(tool) {
      return answers.get(tool) ?? { ok: false, message: `${tool}: ${fqName} has no such tool` };
    },
  };
}
