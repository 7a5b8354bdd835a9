/**
 * The command line's pins of MCP Packs' tool definitions (tool-pins.ts): one JSON file beside
 * the runvil.yaml it reads, `.runvil/pins.json`, by Pack name, so that `runvil run` trusts a
 * server's tools on first use and refuses a run once they change, as a deployment does with
 * its KV, until `runvil packs accept` takes the change. Without a runvil.yaml there are no
 * configured Packs and nothing to pin.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseDefinitions, type PinStore, type ToolDefinitions } from '../host/remote/mcp/tool-pins.ts';

/** Where the pins of the configuration file `configFile` are kept. */
export const pinFileOf = (configFile: string): string => join(dirname(configFile), '.runvil', 'pins.json');

/** A PinStore in the file `file` (made on the first pin; written whole, by a rename, so a crash leaves the old one). */
export function filePinStore(file: string): PinStore {
  const readAll = async (): Promise<Map<string, ToolDefinitions>> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return new Map();
    }
    const pins = new Map<string, ToolDefinitions>();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Error(`${file} is not JSON: delete it to pin every Pack's tools afresh`);
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [name, entry] of Object.entries(value)) {
        const definitions = parseDefinitions(JSON.stringify(entry));
        if (definitions) pins.set(name, definitions);
      }
    }
    return pins;
  };
  return {
    async get(fqName) {
      return (await readAll()).get(fqName) ?? null;
    },
    async put(fqName, definitions) {
      const pins = await readAll();
      pins.set(fqName, definitions);
      await mkdir(dirname(file), { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify(Object.fromEntries(pins), null, 2)}\n`);
      await rename(temporary, file);
    },
  };
}
