/**
 * `runvil keys create|list|revoke`: the deployment's keys (DESIGN.md Part 3, "Keys and
 * scopes"), managed with its root key over `POST /keys`, `GET /keys` and `DELETE /keys/:id`.
 * `create` prints the key alone on standard output (shown this once, so a script can take
 * it), and what it made on standard error; `--json` prints the API's answer instead.
 */
import type { Json } from '../json/json.ts';
import type { KeysCommand } from './args.ts';
import { callDeployment, rootToken, type DeploymentAnswer } from './deployment-client.ts';
import type { CliIo } from './io.ts';

/** Runs `runvil keys ...`; 0 when the deployment did it, 1 when it could not. */
export async function keysCommand(command: KeysCommand, io: CliIo): Promise<number> {
  const token = rootToken(command.target, io.env);
  const send = (method: string, path: string, body?: Json) => callDeployment(command.target, token, method, path, body);
  let answer: DeploymentAnswer;
  switch (command.action) {
    case 'create':
      answer = await send('POST', '/keys', { name: command.name, scopes: command.scopes });
      break;
    case 'list':
      answer = await send('GET', '/keys');
      break;
    case 'revoke':
      answer = await send('DELETE', `/keys/${encodeURIComponent(command.id)}`);
      break;
  }
  if (!answer.ok) {
    io.err(`runvil: ${answer.failure.message}\n  ${answer.failure.remedy}\n`);
    return 1;
  }
  const body = answer.body;
  if (command.json) {
    io.out(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  switch (command.action) {
    case 'create':
      io.out(`${String(body.key)}\n`);
      io.err(`made key ${String(body.id)} ${JSON.stringify(body.name)} (${scopesText(body.scopes)}): the key above is shown this once\n`);
      break;
    case 'list':
      io.out(keyTable(Array.isArray(body.keys) ? (body.keys as unknown as KeyListing[]) : []));
      break;
    case 'revoke':
      io.out(`revoked key ${String(body.id)} ${JSON.stringify(body.name)} at ${String(body.revoked_at)}\n`);
      break;
  }
  return 0;
}

interface KeyListing {
  id: string;
  name: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const scopesText = (scopes: Json | undefined): string => (Array.isArray(scopes) ? scopes.join(', ') : '');

/** The keys as a table, one a line, columns padded; revoked keys say when. */
function keyTable(keys: readonly KeyListing[]): string {
  if (keys.length === 0) return 'no keys: make one with runvil keys create NAME --scope SCOPE\n';
  const rows = [
    ['ID', 'NAME', 'SCOPES', 'CREATED', 'LAST USED', 'REVOKED'],
    ...keys.map((key) => [key.id, key.name, key.scopes.join(','), key.created_at, key.last_used_at ?? '-', key.revoked_at ?? '-']),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n') + '\n';
}
