/**
 * What the Worker bundle gets for the Node built-ins `module` and `url` (wrangler `alias`,
 * vitest `resolve.alias`).
 *
 * wasmoon's glue imports them only on its Node path, which never runs in workerd, but
 * the bundler must still resolve them; without nodejs_compat it cannot.
 */
export {};
