/**
 * The rules for a store path: relative, `/`-separated, no empty segments, no `.` or `..`.
 */

/** The problem with a store path, or null when it is valid. */
export function storePathProblem(path: string, allowEmpty = false): string | null {
  if (path === '') return allowEmpty ? null : 'a store path must not be empty';
  if (path.startsWith('/')) return 'store paths are relative; remove the leading /';
  if (/[\u0000-\u001f\u007f\\]/.test(path)) return 'store paths must not contain control characters or backslashes';
  const segments = path.split('/');
  for (const [index, segment] of segments.entries()) {
    if (segment === '') {
      if (allowEmpty && index === segments.length - 1) continue;
      return 'store paths must not contain empty segments (// or a trailing /)';
    }
    if (segment === '.' || segment === '..') return 'store paths must not contain . or .. segments';
  }
  return null;
}
