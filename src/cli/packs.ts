/**
 * `runvil packs accept VENDOR/NAME`: accepts the tool definitions an MCP Pack's server lists
 * now as its pin (tool-pins.ts), for this machine's runs (the pin file beside runvil.yaml:
 * pin-file.ts) or, with `--url`, for a deployment (`POST /packs/<vendor>/<name>/accept`
 * with its root key).
 */
import { acceptPackTools } from '../host/remote/configured-packs.ts';
import type { PacksCommand } from './args.ts';
import { deploymentConfigFile, loadDeploymentConfig } from './config-file.ts';
import { callDeployment, rootToken } from './deployment-client.ts';
import type { CliIo } from './io.ts';
import { filePinStore, pinFileOf } from './pin-file.ts';

/** Runs `runvil packs accept`; 0 when the pin was taken, 1 when it could not be. */
export async function packsCommand(command: PacksCommand, io: CliIo): Promise<number> {
  let accepted: { digest: string; tools: string[]; changed: string[] };
  if (command.target) {
    const [vendor, name] = command.name.split('/');
    const path = `/packs/${encodeURIComponent(vendor!)}/${encodeURIComponent(name!)}/accept`;
    const answer = await callDeployment(command.target, rootToken(command.target, io.env), 'POST', path);
    if (!answer.ok) {
      io.err(`runvil: ${answer.failure.message}\n  ${answer.failure.remedy}\n`);
      return 1;
    }
    accepted = answer.body as unknown as typeof accepted;
  } else {
    const file = deploymentConfigFile(command.config);
    if (file === null) {
      io.err(`runvil: no runvil.yaml here configures ${command.name}\n  run this where runvil.yaml is, or name it with --config FILE\n`);
      return 1;
    }
    const outcome = await acceptPackTools(await loadDeploymentConfig(command.config), command.name, io.env, filePinStore(pinFileOf(file)));
    if (!outcome.ok) {
      io.err(`runvil: ${outcome.message}\n`);
      return 1;
    }
    accepted = outcome;
  }
  if (command.json) io.out(`${JSON.stringify({ name: command.name, ...accepted }, null, 2)}\n`);
  else {
    const what = accepted.changed.length > 0 ? `, the changed tools ${accepted.changed.join(', ')} among them` : '';
    io.out(`pinned ${command.name}'s ${accepted.tools.length} tools${what}: ${accepted.digest}\n`);
  }
  return 0;
}
