/**
 * The build a run started on (DESIGN.md Part 3, "Deploys never break a run in flight"): the
 * Engine's version, a digest of the Lua runtime as loaded, of the deployment's configuration,
 * of the run's prompt source and of the tool lists it was prepared with. A deployment's build
 * is the part that is the deployment's (engine, lua, config, and `id`, a short digest of
 * those three); a run adds its own prompt and Packs. The Worker records a run's at its start
 * and names both builds when a resumed run's replay diverges; `runvil deploy-check` computes
 * the local deployment's with the same functions. Platform-neutral (WebCrypto's SHA-256).
 */
import { canonicalJson } from '../json/canonical-json.ts';
import { hexOf, sha256 } from '../json/digest.ts';
import type { Json } from '../json/json.ts';
import type { RuntimeChunk } from '../engine/lua/vm.ts';
import { LAZY_MODULES, runtimeChunk } from '../engine/lua/runtime/index.ts';

/** The Engine's version: package.json's (test/host/run-build.test.ts keeps them equal). */
export const ENGINE_VERSION = '0.1.0';

/** The wasmoon release whose Lua the runtime runs on: package.json's pin (kept equal by the same test). */
export const WASMOON_VERSION = '1.16.0';

/** What a deployment is built from: the Engine, its Lua runtime and its configuration. */
export interface DeploymentBuild {
  /** A short digest of engine, lua and config: what "the build" is for a deployment. */
  id: string;
  engine: string;
  /** `sha256:<hex>` over the runtime's chunks in their load order and the wasmoon version. */
  lua: string;
  /** `sha256:<hex>` of the configuration's canonical JSON (src/config/config-canonical.ts). */
  config: string;
}

/** The build a run started on: its deployment's, its prompt source's digest and its Packs' tool lists'. */
export interface RunBuild extends DeploymentBuild {
  /** `sha256:<hex>` of the run's prompt source. */
  prompt: string;
  /** Pack id -> `sha256:<hex>` of the tool list the run was prepared with (a null-prototype record). */
  packs: Record<string, string>;
}

/** What a deployment's build digests: the configuration (as canonicalConfig gives it) and, by default, this Engine's Lua runtime. */
export interface DeploymentInputs {
  config: Json;
  /** The runtime's chunks in their load order (default: the ones every section VM loads, then the lazy ones). */
  lua?: readonly RuntimeChunk[];
  wasmoon?: string;
}

/** The runtime's chunks as the Engine loads them: the one every section VM loads first, then the modules loaded on first use, by name. */
export function luaRuntimeChunks(): RuntimeChunk[] {
  const lazy = Object.keys(LAZY_MODULES)
    .sort()
    .map((name) => LAZY_MODULES[name]!);
  return [runtimeChunk(), ...lazy];
}

/** `sha256:<hex>` of a text. */
export async function sha256Text(text: string): Promise<string> {
  return `sha256:${hexOf(await sha256(text))}`;
}

/** The digest of a Lua runtime: each chunk's name and source, in order, after the wasmoon version. */
export async function luaDigest(chunks: readonly RuntimeChunk[], wasmoon = WASMOON_VERSION): Promise<string> {
  return sha256Text(canonicalJson({ wasmoon, chunks: chunks.map((chunk) => [chunk.name, chunk.source]) }));
}

/** The build of a deployment with `inputs`. */
export async function deploymentBuild(inputs: DeploymentInputs): Promise<DeploymentBuild> {
  const lua = await luaDigest(inputs.lua ?? luaRuntimeChunks(), inputs.wasmoon);
  const config = await sha256Text(canonicalJson(inputs.config));
  return { id: await buildId(ENGINE_VERSION, lua, config), engine: ENGINE_VERSION, lua, config };
}

/** A short id for engine, lua and config: 12 hex digits of their digest (enough to tell a deployment's builds apart, short enough to read). */
async function buildId(engine: string, lua: string, config: string): Promise<string> {
  return (await sha256Text(canonicalJson([engine, lua, config]))).slice('sha256:'.length, 'sha256:'.length + 12);
}

/** The build of a run of `source` on `deployment`, with its Packs' tool-list digests (pack id -> digest). */
export async function runBuild(deployment: DeploymentBuild, source: string, packs: ReadonlyMap<string, string> = new Map()): Promise<RunBuild> {
  return { ...deployment, prompt: await sha256Text(source), packs: packRecord(packs) };
}

/** Pack digests as a null-prototype record, in pack id order. */
export function packRecord(packs: ReadonlyMap<string, string>): Record<string, string> {
  const record: Record<string, string> = Object.create(null);
  for (const id of [...packs.keys()].sort()) record[id] = packs.get(id)!;
  return record;
}

/** Whether two builds are the same deployment's (engine, lua and config). */
export const sameDeployment = (a: DeploymentBuild, b: DeploymentBuild): boolean => a.id === b.id;

/** A build in words, for messages: `build 1a2b3c4d5e6f (engine 0.1.0, lua sha256:1a2b3c4d…, config sha256:5e6f7a8b…)`. */
export function buildWords(build: DeploymentBuild): string {
  return `build ${build.id} (engine ${build.engine}, lua ${short(build.lua)}, config ${short(build.config)})`;
}

/** A digest cut to its first 8 hex digits. */
function short(digest: string): string {
  return digest.length > 'sha256:'.length + 8 ? `${digest.slice(0, 'sha256:'.length + 8)}…` : digest;
}

/**
 * The words a Determinism error of a resumed run adds when it resumed on another build than
 * it started on: `the run started on build X (…) and resumed on build Y (…)`.
 */
export function buildChangeWords(started: DeploymentBuild, resumed: DeploymentBuild): string {
  return `the run started on ${buildWords(started)} and resumed on ${buildWords(resumed)}`;
}
