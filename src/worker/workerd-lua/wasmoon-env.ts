/**
 * The global the wasmoon glue reads while its module is evaluated, installed before it.
 *
 * When wasmoon's module body runs it computes its script URL from `location.href`, or,
 * when there is no `location`, from `require('url').pathToFileURL(__filename)`, which
 * a Worker bundle lacks: the Worker fails to start with "Uncaught ReferenceError:
 * __filename is not defined". workerd has no `location`, so this module defines one, and
 * it loads first (README.md, "It loads first"). The URL is never fetched (`.invalid`
 * cannot resolve).
 */

/** The script URL the glue is told it was loaded from. */
export const GLUE_BASE_URL = 'https://runvil.invalid/wasmoon/';

if (!('location' in globalThis)) {
  Object.defineProperty(globalThis, 'location', {
    value: new URL(GLUE_BASE_URL),
    configurable: true,
    writable: true,
  });
}
