/**
 * Runs the MCP conformance suite on Node 20: `node --import ./scripts/mcp-conformance-hooks.mjs
 * node_modules/@modelcontextprotocol/conformance/dist/index.js ...`. Its bundle imports
 * `globSync` from `fs`, which Node 22 added; this module-resolution hook hands the suite's
 * files (and only them) mcp-conformance-fs.mjs instead. On a Node with `globSync` it does nothing.
 */
import fs from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const SUITE = '/node_modules/@modelcontextprotocol/conformance/';
const SHIM = new URL('./mcp-conformance-fs.mjs', import.meta.url).href;

// Imported with --import on the main thread, this file registers itself; in the hooks' own
// thread it is the hooks module, and only `resolve` below matters.
if (isMainThread && fs.globSync === undefined) register(import.meta.url);

/** Resolves `fs` and `node:fs` imported by the suite's bundle to the shim. */
export function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes(SUITE)) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
