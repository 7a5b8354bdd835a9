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

/** The form FORM_ASK asks with: MCP's requestedSchema as the prompt gives it. */
export const SHIP_FORM = {
  type: 'object',
  properties: {
    owner: { type: 'string', title: 'Owner', minLength: 1 },
    days: { type: 'integer', title: 'Days', minimum: 1, maximum: 30 },
    channel: { type: 'string', title: 'Channel', enum: ['email', 'chat'] },
  },
  required: ['owner', 'days'],
};

/** Asks with a form; answers the filled object's JSON text. */
export const FORM_ASK = `---
name: form-ask
description: Asks with a form.
runvil: 0
uses: [user-input]
---
# Form ask

\`\`\`lua
local answer = tools.call('user-input/ask', { question = 'Ship details?', form = json.decode(${JSON.stringify(JSON.stringify(SHIP_FORM))}) })
local filled = json.decode(answer)
return filled.owner .. ' in ' .. filled.days .. ' days'
\`\`\`
`;
