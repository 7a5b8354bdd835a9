/**
 * The JSON value type every layer passes around: prompts, the Engine, the Host, the Worker.
 * Platform-neutral, with no imports, so any module may depend on it without a cycle.
 */

/** A JSON value as the Engine passes it around. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Gives a plain object the own field `key`, as a spread or JSON.parse would: `__proto__` too
 * becomes an ordinary field rather than the object's prototype. For objects built field by
 * field from names that came from outside; a plain object stays fast where a null-prototype
 * one would not (V8 keeps those as dictionaries, and spreads and walks them far slower).
 */
export function defineField(object: { [key: string]: Json | undefined }, key: string, value: Json): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}
