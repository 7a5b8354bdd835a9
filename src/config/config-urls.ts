/**
 * The URL checks of runvil.yaml, applied to a URL the file writes out when the file is read
 * (with its line and column), and to one built from `${NAME}` when the value is used, after
 * its variables are read: a variable cannot bring in what the file could not write
 * (another scheme, credentials, a path on `public_url`).
 */
import { resolveConfigValue, type ConfigText, type ConfigValueError } from './deployment-config.ts';

/** Whether a string holds a `${NAME}` reference (then it is checked when used). */
export const HAS_REFERENCE = /\$\{/;

/** Why `url` is not an http(s) URL without credentials, or null; `quoted` false leaves the text out of the message (a variable's value may be secret). */
export function urlProblem(url: string, quoted = true): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return quoted ? `is not a URL: ${JSON.stringify(url)}` : 'is not a URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return `must be an http or https URL, got ${parsed.protocol}`;
  if (parsed.username !== '' || parsed.password !== '') return 'must not hold a user name or password (put credentials in headers, from ${NAME})';
  return null;
}

/** Why `url` is not an origin (an http(s) URL with no path, query or fragment), or null. */
export function originProblem(url: string, quoted = true): string | null {
  const problem = urlProblem(url, quoted);
  if (problem) return problem;
  const parsed = new URL(url);
  if (parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '')
    return `must be an origin such as https://runvil.example.com, with no path, query or fragment`;
  return null;
}

/** A URL of runvil.yaml that its variables made into one the file's checks refuse. */
export interface RefusedConfigUrl {
  kind: 'RefusedConfigUrl';
  message: string;
}

/**
 * Reads the `${NAME}` references of a URL of runvil.yaml (`what` names it in messages, such
 * as "notify[0].url") and checks the result as the file's own URLs are checked: an http(s)
 * URL with no credentials, or for `origin`, an origin.
 */
export function resolveConfigUrl(
  text: ConfigText,
  vars: Readonly<Record<string, string | undefined>>,
  what: string,
  shape: 'url' | 'origin' = 'url',
): { ok: true; value: string } | { ok: false; error: ConfigValueError | RefusedConfigUrl } {
  const resolved = resolveConfigValue(text, vars);
  if (!resolved.ok) return resolved;
  const problem = (shape === 'origin' ? originProblem : urlProblem)(resolved.value, false);
  if (problem === null) return resolved;
  const names = [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => `\${${match[1]}}`);
  const unique = [...new Set(names)];
  const read = unique.length === 0 ? '' : `, once ${unique.join(' and ')} ${unique.length === 1 ? 'is' : 'are'} read,`;
  return { ok: false, error: { kind: 'RefusedConfigUrl', message: `runvil.yaml's \`${what}\`${read} ${problem}` } };
}
