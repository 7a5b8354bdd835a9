/**
 * The peers' workloads (../shared/bench-peers/README.md) written as Runvil prompts, shared
 * by the benchmarks and the tests that check them.
 */

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
