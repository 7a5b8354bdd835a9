/**
 * Request bodies, read with a size limit: a body over 1 MiB is refused with 413 before
 * anything is parsed or stored.
 */
import { ApiError } from './http-error.ts';
import type { Json } from '../prompt/types.ts';

/** The largest body any route accepts: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

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
  } catch (error) {
    throw new ApiError(400, `${what} is not JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError(400, `${what} must be a JSON object`);
  }
  return value as { [key: string]: Json };
}

/** Refuses keys of a JSON body other than `allowed`. */
export function onlyKeys(body: { [key: string]: Json }, allowed: readonly string[], what = 'the request body'): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      const known = allowed.map((k) => `\`${k}\``).join(', ');
      throw new ApiError(400, `${what} has an unknown field \`${key}\`; it takes ${known}`, { field: key });
    }
  }
}
