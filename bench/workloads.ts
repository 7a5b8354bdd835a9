/**
 * The peers' workloads (../shared/bench-peers/README.md) written as Runvil prompts, with
 * their in-process `grab` tool and the W3 model's choice of call, shared by the benchmarks
 * and the tests that check them.
 */
import type { Harness } from '../src/engine/effects.ts';
import { createHarness, servicesOf } from '../src/host/harness.ts';
import type { Pack } from '../src/host/pack.ts';
import { MemoryRunStore } from '../src/host/run-store.ts';
import type { MessageRecord, ToolCall } from '../src/models/provider.ts';

/**
 * The peers' in-process grab tool: `grab_grab` on the wire, answering `grabbed {value}`;
 * `noted`, when given, gets each value it grabs (tests that count what a replay performs).
 */
export function grabPackNoting(noted?: string[]): Pack {
  return {
    manifest: {
      fqName: 'bench/grab',
      description: 'In-process grab tool',
      tools: [
        {
          id: 'grab/grab',
          description: 'Grab a value',
          parameters: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
          output: 'plain',
          trusted: true,
        },
      ],
    },
    call: async (_tool, args) => {
      noted?.push(String(args.value));
      return { ok: true, output: `grabbed ${String(args.value)}` };
    },
  };
}

/** The grab tool as the benchmarks use it. */
export const grabPack: Pack = grabPackNoting();

/**
 * The peers' W3 model, for a conversation that opens with `Grab x N times.`: N grab calls,
 * one per reply, then an ask; null for any other conversation.
 */
export function w3Reply(messages: readonly MessageRecord[]): ToolCall | null {
  const n = /^Grab x (\d+) times\.$/.exec(messages.find((m) => m.role === 'user')?.content ?? '')?.[1];
  if (n === undefined) return null;
  const r = messages.filter((m) => m.role === 'tool').length;
  return r < Number(n)
    ? { id: `call_${r + 1}`, name: 'grab_grab', arguments: { value: 'x' } }
    : { id: 'call_ask', name: 'ask', arguments: { question: 'Favourite colour?' } };
}

/** The W3 prompt: the model loop with grab offered, and `ask` a local tool whose answer ends the loop. */
export const W3 = `---
name: w3
description: The peers' W3 workload, N grab steps then an ask.
runvil: 0
uses: [bench/grab, user-input]
args:
  n: { type: integer }
models:
  agent: { round_cap: 5000 }
---
# W3

## Loop
\`\`\`lua
models.use('agent')
tools.offer(tools.required())
tools.offer_local('ask', 'Ask the human a question', { question = 'string' }, function(a)
  error({ answer = tools.call('user-input/ask', { question = a.question }) })
end)
messages:user('Grab x ' .. args.n .. ' times.')
local ok, err = pcall(models.loop)
if ok or type(err) ~= 'table' then error(err) end
return err.answer
\`\`\`
`;

/** B1's prompt: twenty pure-Lua sections, each adding to a var; it returns `total 210` (B1_RESULT). */
export const B1_SOURCE = `---\nname: bench\ndescription: Twenty pure-Lua sections.\nrunvil: 0\n---\n\n# Bench\n\n${Array.from(
  { length: 20 },
  (_, i) =>
    `## Step ${i + 1}\n\n\`\`\`lua\nvar.total = (var.total or 0) + ${i + 1}\nlocal parts = {}\nfor j = 1, 10 do parts[j] = tostring(j * ${i + 1}) end\nvar.last = table.concat(parts, ',')\n${i === 19 ? "return 'total ' .. var.total" : ''}\n\`\`\`\n`,
).join('\n')}`;

/** What B1's prompt returns. */
export const B1_RESULT = 'total 210';

/** A Harness for pure-Lua workloads: files in memory, no Packs, no operator, no model. */
export function pureLuaHarness(): Harness {
  return createHarness({
    runId: 'bench',
    store: new MemoryRunStore(),
    packs: new Map(),
    services: servicesOf(),
    operator: { ask: async () => ({ ok: false, message: 'no operator' }) },
    models: { provider: () => 'no model' },
  });
}
