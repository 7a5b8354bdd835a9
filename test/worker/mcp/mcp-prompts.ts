/**
 * The prompts the MCP tests call.
 */

/** Asks twice: who (any text), then when (one of two choices); answers `<who> ships <when>`. */
export const TWO_ASKS = `---
name: two-asks
description: Asks who owns the launch, then when it ships.
runvil: 0
uses: [user-input]
args:
  topic: { type: string, default: the launch }
---
# Two asks

\`\`\`lua
local who = tools.call('user-input/ask', { question = 'Who owns ' .. args.topic .. '?' })
local when = tools.call('user-input/ask', { question = 'When does it ship?', choices = { 'today', 'tomorrow' } })
store.write('answers.txt', who .. '\\n' .. when)
return who .. ' ships ' .. when
\`\`\`
`;
