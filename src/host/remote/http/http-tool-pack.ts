/**
 * A Pack served by an HTTP tool service (`http:` in runvil.yaml; DESIGN.md Part 2, "HTTP
 * tool services"). Each call is a signed POST of `{type: "tool.call", run_id, call_id, tool,
 * arguments, callback_url, callback_token, deadline}`; a 200 answers now, a 202 makes the
 * call wait in the run's call ledger (tool-calls.ts) until the service posts the result to
 * the callback URL, or the tool's timeout passes.
 *
 * A call is opened in the ledger before it is sent, so a result posted before the 202 is
 * answered is not lost; a replay that finds the call's record waits again (`waiting`), takes
 * the result that came meanwhile (`done`), or sends again under the same call id only when
 * the first send never got an answer (`sending`).
 */
import type { ConfiguredPack, HttpSource } from '../../../config/deployment-config.ts';
import { resolveConfigValue } from '../../../config/deployment-config.ts';
import { resolveConfigUrl } from '../../../config/config-urls.ts';
import { pathText } from '../../../config/yaml-shape.ts';
import { DEFAULT_RETRY, sendCall, type RetryPolicy } from './http-tool-send.ts';
import type { Pack, ToolContext, ToolManifest, ToolOutcome } from '../../pack.ts';
import { callClosed, callIdOf, noResultWithin, type CallEnd, type ToolResult } from '../../tool-calls.ts';
import { outputCapExceeded, TOOL_OUTPUT_BYTES } from '../../tool-output-cap.ts';

/** What an HTTP tool Pack is built with beside its configuration. */
export interface HttpToolPackOptions {
  /** The environment `${NAME}` is read from (own keys only). */
  vars: Readonly<Record<string, string | undefined>>;
  fetch?: typeof fetch;
  retry?: RetryPolicy;
  clock?: () => number;
}

/** The manifest of a configured `http` Pack. */
function manifestOf(config: ConfiguredPack & { source: HttpSource }): { tools: ToolManifest[]; timeouts: Map<string, number> } {
  const packId = config.fqName.split('/')[1]!;
  const timeouts = new Map<string, number>();
  const tools = config.source.tools.map((tool): ToolManifest => {
    const id = `${packId}/${tool.name}`;
    timeouts.set(id, tool.timeoutSeconds);
    return { id, description: tool.description, parameters: tool.parameters, output: tool.output, trusted: config.trusted };
  });
  return { tools, timeouts };
}

/** True for a configured Pack served by an HTTP tool service. */
export const isHttpPack = (pack: ConfiguredPack): pack is ConfiguredPack & { source: HttpSource } => pack.source.kind === 'http';

/** Builds the Pack of a configured `http` Pack. */
export function httpToolPack(config: ConfiguredPack & { source: HttpSource }, options: HttpToolPackOptions): Pack {
  const { tools, timeouts } = manifestOf(config);
  const source = config.source;
  /** The URL and secret now, or why they cannot be read (a `${NAME}` that is not set, a URL the file's checks refuse). */
  const endpoint = (): { ok: true; url: string; secret: string } | { ok: false; message: string } => {
    const url = resolveConfigUrl(source.url, options.vars, pathText(['packs', config.fqName, 'http', 'url']));
    if (!url.ok) return { ok: false, message: url.error.message };
    const secret = resolveConfigValue(source.secret, options.vars);
    if (!secret.ok) return { ok: false, message: secret.error.message };
    return { ok: true, url: url.value, secret: secret.value };
  };
  return {
    manifest: { fqName: config.fqName, description: config.description, tools },
    unavailableReason() {
      const found = endpoint();
      return found.ok ? null : found.message;
    },
    async call(tool, args, context) {
      const timeout = timeouts.get(tool);
      if (timeout === undefined) return { ok: false, message: `${tool}: ${config.fqName} has no such tool` };
      const ledger = context.calls;
      if (!context.effect || !ledger) return { ok: false, message: `${tool}: this host cannot receive tool results, so it cannot call an HTTP tool service` };
      const found = endpoint();
      if (!found.ok) return { ok: false, message: `${tool}: ${found.message}` };
      const callId = await callIdOf(context.runId, context.effect);
      const record = ledger.open({ callId, tool, chain: context.effect.chain, timeoutSeconds: timeout });
      const output = outputOf(
        config.fqName,
        tools.find((entry) => entry.id === tool)!,
      );
      if (record.state !== 'sending') return endedAs(tool, timeout, await ledger.wait(callId), output);
      // Waited on before the call goes out: a result posted before the 202 arrives is not missed.
      const ended = ledger.wait(callId);
      let callback: { url: string; token: string };
      try {
        callback = await ledger.callback(callId);
      } catch (error) {
        // The deployment cannot take results (no public_url nor request origin, no secret): nothing is sent.
        ledger.settle(callId, { error: `${tool}: ${error instanceof Error ? error.message : 'no callback URL for the result'}` });
        return endedAs(tool, timeout, await ended, output);
      }
      const body = JSON.stringify({
        type: 'tool.call',
        run_id: context.runId,
        call_id: callId,
        tool,
        arguments: args,
        callback_url: callback.url,
        callback_token: callback.token,
        deadline: record.deadline,
      });
      const sent = await sendCall({ url: found.url, secret: found.secret, callId, tool, body }, options.retry ?? DEFAULT_RETRY, {
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...signalOf(context),
        ...(options.clock ? { clock: options.clock } : {}),
      });
      if (sent.kind === 'later') ledger.markWaiting(callId);
      else ledger.settle(callId, sent.kind === 'now' ? sent.result : { error: sent.message });
      // A result that came while the call was being sent wins over the send's own outcome.
      return endedAs(tool, timeout, await ended, output);
    },
  };
}

const signalOf = (context: ToolContext): { signal?: AbortSignal } => (context.signal ? { signal: context.signal } : {});

/** Turns a result into the tool's answer: text for a plain tool, JSON text for a structured one; one past the cap, Limit. */
const outputOf =
  (fqName: string, manifest: ToolManifest) =>
  (result: ToolResult): ToolOutcome => {
    if ('error' in result) return { ok: false, message: result.error };
    if ('oversized' in result) return outputCapExceeded(fqName, manifest.id, TOOL_OUTPUT_BYTES);
    if (manifest.output === 'structured') return { ok: true, output: JSON.stringify(result.output) };
    if (typeof result.output === 'string') return { ok: true, output: result.output };
    return { ok: false, message: `${manifest.id}: the tool service's output is not text (a plain tool's output is a string)` };
  };

function endedAs(tool: string, timeout: number, end: CallEnd, output: (result: ToolResult) => ToolOutcome): ToolOutcome {
  if (end.kind === 'expired') return { ok: false, message: noResultWithin(tool, timeout) };
  if (end.kind === 'closed') return { ok: false, message: callClosed(tool) };
  return output(end.result);
}

/** The Packs of the configuration's `http` entries. */
export function httpToolPacks(packs: Iterable<ConfiguredPack>, options: HttpToolPackOptions): Pack[] {
  return [...packs].filter(isHttpPack).map((pack) => httpToolPack(pack, options));
}
