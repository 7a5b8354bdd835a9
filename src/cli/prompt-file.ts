/**
 * Prompt files on disk: reading one (a missing file is a usage error) and printing the
 * parser's errors the way compilers do, `file:line:column: error[Kind]: message`.
 */
import { readFile, stat } from 'node:fs/promises';
import { UsageError, type UsagePlace } from './args.ts';

/** Something with a place in a file and a message. */
export interface Placed {
  kind?: string;
  message: string;
  file?: string;
  line?: number;
  column?: number;
}

/** Reads a text file the user named; a missing or unreadable one is a usage error. */
export async function readUserFile(path: string, what: string, where?: UsagePlace): Promise<string> {
  const info = await stat(path).catch(() => null);
  if (!info) throw new UsageError(`${what} ${path} does not exist`, where);
  if (info.isDirectory()) throw new UsageError(`${what} ${path} is a directory, not a file`, where);
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${path}: ${(error as Error).message}`, where);
  }
}

/** `file:line:column: ` (each part only when known), or '' when there is no file. */
export function placePrefix(where: { file?: string; line?: number; column?: number }): string {
  if (!where.file) return '';
  let text = where.file;
  if (where.line !== undefined) {
    text += `:${where.line}`;
    if (where.column !== undefined) text += `:${where.column}`;
  }
  return `${text}: `;
}

/** One error line: `file:line:column: error[Kind]: message`. */
export function formatError(error: Placed): string {
  return `${placePrefix(error)}error[${error.kind ?? 'Error'}]: ${error.message}`;
}

/** A usage error as printed, one line per problem: `file:line:column: message` or `runvil: message`. */
export function formatUsageError(error: UsageError): string {
  return [error, ...error.more].map((each) => (each.where ? `${placePrefix(each.where)}${each.message}` : `runvil: ${each.message}`)).join('\n');
}
