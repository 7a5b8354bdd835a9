/**
 * The JSON value type every layer passes around: prompts, the Engine, the Host, the Worker.
 * Platform-neutral, with no imports, so any module may depend on it without a cycle.
 */

/** A JSON value as the Engine passes it around. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
