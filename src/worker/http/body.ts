/**
 * Request bodies, read with a size limit: a body over 1 MiB is refused with 413 before
 * anything is parsed or stored.
 */
import { ApiError } from './http-error.ts';
import type { Json } from '../../json/json.ts';

/** The largest body any route accepts: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** How deeply a JSON body may nest arrays and objects: deeper is refused before anything walks it recursively. */
export const MAX_JSON_DEPTH = 64;

/** Content types a JSON body may be sent as: JSON, and what fetch (`text/plain`) and `curl -d` send by default. */
const JSON_TYPES = /^(application\/json|application\/[a-z0-9.+-]+\+json|text\/plain|application\/x-www-form-urlencoded)$/;

/** Refuses a body sent as a content type that is no JSON text (a form upload, a binary file, XML...) with 415. */
export function checkJsonContentType(request: Request): void {
  const header = request.headers.get('content-type');
  if (header === null) return;
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  if (type === '' || JSON_TYPES.test(type)) return;
  throw new ApiError(415, `the request body must be JSON (Content-Type: application/json), not ${JSON.stringify(type.slice(0, 100))}`);
}

const tooLarge = () => new ApiError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes (1 MiB), the most this API accepts`);

/** The body as text, refusing more than `limit` bytes (by Content-Length first, then as it streams). */
export async function readText(request: Request, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? 'NaN');
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError(400, 'the request body is not valid UTF-8 text');
  }
}

/** Parses a JSON body that must be an object (an empty body reads as `{}`). */
export function parseJsonObject(text: string, what = 'the request body'): { [key: string]: Json } {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's own message is not shown: no exception text leaves the Worker.
    throw new ApiError(400, `${what} is not valid JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError(400, `${what} must be a JSON object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}`);
  }
  if (jsonDepth(value) > MAX_JSON_DEPTH)
    throw new ApiError(400, `${what} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, the most this API accepts`);
  return value as { [key: string]: Json };
}

/** How deeply `value` nests arrays and objects, walked without recursion (the input may be a million levels deep). */
function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > deepest) deepest = depth;
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Refuses keys of a JSON body other than `allowed`. */
export function onlyKeys(body: { [key: string]: Json }, allowed: readonly string[], what = 'the request body'): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      const known = allowed.map((k) => `\`${k}\``).join(', ');
      const shown = key.length > 100 ? `${key.slice(0, 100)}...` : key;
      throw new ApiError(400, `${what} has an unknown field \`${shown}\`; it takes ${known}`, { field: shown });
    }
  }
}
