/**
 * The prompts the workerd tests upload.
 */

const lua = (code: string) => '```lua\n' + code + '\n```\n';

/** Pure Lua: greets, writes a file. */
export const GREET = `---
name: greet
description: Greets in pure Lua.
runvil: 0
args:
  name: { type: string, default: world }
  times: { type: integer, default: 1 }
---
# Greet

## Hello
${lua("store.write('greeting.txt', ('hello %s'):format(args.name))\nreturn store.read('greeting.txt') .. ' x' .. args.times")}`;

/**
 * Asks the operator twice and calls tools: nine effects in all (store.write, counter/tick,
 * ask, store.append, ask, model.round, counter/tick, store.append, store.read).
 */
export const DESK = `---
name: desk
description: Asks twice, calls tools, infers once.
runvil: 0
uses: [user-input, acme/counter]
args:
  topic: { type: string, default: the launch }
---
# Desk

## First
${lua(`store.write('log.txt', 'start\\n')
var.stamp = tools.call('counter/tick', { label = 'first' })
var.owner = tools.call('user-input/ask', { question = 'Who owns ' .. args.topic .. '?' })
store.append('log.txt', 'owner ' .. var.owner .. '\\n')`)}
## Second
${lua(`var.date = tools.call('user-input/ask', { question = 'When does it ship?' })
var.note = models.infer('Note: ' .. var.owner .. ' ships ' .. var.date)
tools.call('counter/tick', { label = 'second' })
store.append('log.txt', 'date ' .. var.date .. '\\n')
local log = (store.read('log.txt'):gsub('\\n', ';'))
return table.concat({ var.owner, var.date, var.stamp, var.note, log, tostring(math.random(1, 1000)) }, '|')`)}`;

/** The number of effects a DESK run journals. */
export const DESK_EFFECTS = 9;

/** Waits on one ask, forever unless answered or cancelled. */
export const WAITER = `---
name: waiter
description: Waits on one ask.
runvil: 0
uses: [user-input]
---
# Waiter

## Wait
${lua("return 'got ' .. tools.call('user-input/ask', { question = 'Anything?' })")}`;
