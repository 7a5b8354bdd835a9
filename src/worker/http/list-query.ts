/**
 * The query strings of the list routes (`GET /runs`, `GET /asks`): known parameters only,
 * each at most once, each value checked; and their cursors, which are opaque to clients
 * (base64url of the last row's sort key, tagged with the list they page through) and
 * checked as strictly as any other input, since a client can send anything.
 */
import { ApiError } from './http-error.ts';

/** The default and the largest page size. */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/** The query's parameters, refusing any but `allowed` and any given twice. */
export function listParams(url: URL, allowed: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    const shown = name.length > 100 ? `${name.slice(0, 100)}...` : name;
    if (!allowed.includes(name)) {
      throw new ApiError(400, `unknown query parameter \`${shown}\`; this route takes ${allowed.map((k) => `\`${k}\``).join(', ')}`, { field: shown });
    }
    if (params.has(name)) throw new ApiError(400, `the query parameter \`${name}\` is given more than once`, { field: name });
    params.set(name, value);
  }
  return params;
}

/** `limit`: an integer from 1 to MAX_LIMIT, DEFAULT_LIMIT when absent. */
export function limitOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  if (!/^[0-9]{1,4}$/.test(text) || Number(text) < 1 || Number(text) > MAX_LIMIT) {
    throw new ApiError(400, `\`limit\` must be an integer from 1 to ${MAX_LIMIT}, not ${JSON.stringify(text.slice(0, 50))}`, { field: 'limit' });
  }
  return Number(text);
}

/** A value that must be one of `values`, or null when absent. */
export function oneOf<T extends string>(name: string, text: string | undefined, values: readonly T[]): T | null {
  if (text === undefined) return null;
  if (!(values as readonly string[]).includes(text)) {
    throw new ApiError(400, `\`${name}\` must be one of ${values.join(', ')}, not ${JSON.stringify(text.slice(0, 50))}`, { field: name });
  }
  return text as T;
}

/** `prompt`: a prompt name (1 to 200 characters), or null when absent. */
export function promptFilter(text: string | undefined): string | null {
  if (text === undefined) return null;
  if (text.length === 0 || text.length > 200) throw new ApiError(400, '`prompt` must be a prompt name of 1 to 200 characters', { field: 'prompt' });
  return text;
}

const encoder = new TextEncoder();

/** The cursor after a row whose sort key is `key`, for the list `list`. */
export function encodeCursor(list: string, key: readonly string[]): string {
  const bytes = encoder.encode(JSON.stringify([list, ...key]));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const badCursor = () => new ApiError(400, '`cursor` is not a cursor of this list: send the `next_cursor` of the previous page as it was', { field: 'cursor' });

/** The sort key a cursor of `list` holds (`size` strings), or null when absent; 400 for anything else. */
export function decodeCursor(list: string, text: string | undefined, size: number): string[] | null {
  if (text === undefined) return null;
  if (text.length === 0 || text.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(text)) throw badCursor();
  let value: unknown;
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(value) || value.length !== size + 1 || value[0] !== list || !value.every((part) => typeof part === 'string' && part.length <= 300))
    throw badCursor();
  return value.slice(1) as string[];
}
