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

/**
 * Two tasks: `0.0` asks the operator (ask id `0.0-1`), `0.1` writes files, ticks the counter
 * twice (the second tick takes a timer's while) and asks the model, and ends while `0.0`
 * waits; the main chain awaits both and reads the log.
 */
export const TASKS = `---
name: tasks
description: One task asks the operator while another works.
runvil: 0
uses: [user-input, acme/counter]
args:
  topic: { type: string, default: the launch }
---
# Tasks

## Main
${lua(`local asker = tasks.spawn('## Ask', { topic = args.topic })
local worker = tasks.spawn('## Work')
local worked = tasks.await(worker)
local owner = tasks.await(asker)
store.append('log.txt', 'main ' .. owner .. '\\n')
local log = (store.read('log.txt'):gsub('\\n', ';'))
return table.concat({ worked, owner, store.read('owner.txt'), log, tostring(math.random(1, 1000)) }, '|')`)}
## Ask
${lua(`local input = ...
local owner = tools.call('user-input/ask', { question = 'Who owns ' .. input.topic .. '?' })
store.write('owner.txt', 'owner ' .. owner)
return owner`)}
## Work
${lua(`store.write('log.txt', 'work\\n')
local a = tools.call('counter/tick', { label = 'w1' })
store.append('log.txt', a .. '\\n')
local b = tools.call('counter/tick', { label = 'w2', wait_ms = 20 })
store.append('log.txt', b .. '\\n')
return models.infer('Work: ' .. a .. ' ' .. b)`)}`;

/** A fanout of three arms `0.f0.1` to `0.f0.3`, each asking once (ask ids `0.f0.<i>-1`) and writing its answer. */
export const ARM_ASKS = `---
name: arm-asks
description: A fanout whose arms each ask the operator once.
runvil: 0
uses: [user-input, acme/counter]
---
# Arm asks

## Main
${lua(`local colours = tasks.fanout('## Arm', { 'sky', 'grass', 'sun' })
tools.call('counter/tick', { label = 'after' })
return table.concat(colours, ',') .. '|' .. table.concat(store.list('colours/'), ',')`)}
## Arm
${lua(`local colour = tools.call('user-input/ask', { question = 'Colour of the ' .. item .. '?' })
store.write('colours/' .. item .. '.txt', colour)
return item .. '=' .. colour`)}`;

/** Task `0.0` asks and is cancelled once task `0.1` has ticked; then the main chain asks (`0-1`). */
export const CANCEL_ASK = `---
name: cancel-ask
description: A task cancelled while it waits on an ask.
runvil: 0
uses: [user-input, acme/counter]
---
# Cancel ask

## Main
${lua(`local asker = tasks.spawn('## Ask')
local ticker = tasks.spawn('## Tick')
local ticked = tasks.await(ticker)
asker:cancel()
local go = tools.call('user-input/ask', { question = 'Go on?' })
return table.concat({ ticked, asker:status(), go }, '|')`)}
## Ask
${lua(`return tools.call('user-input/ask', { question = 'Never answered?' })`)}
## Tick
${lua(`return tools.call('counter/tick', { label = 't', wait_ms = 10 })`)}`;

/** The iterations of SPIN_ASK's loop: three Lua instructions each, some 6M in all, 6 pauses of the count hook. */
export const SPIN_ITERATIONS = 2_000_000;

/**
 * Task `0.0` asks the operator (ask id `0.0-1`) while task `0.1` computes in pure Lua for
 * millions of instructions (the Engine pauses it every 1M, letting the event loop run), then
 * ticks the counter (a timer's while) and writes its sum; the main chain awaits both.
 */
export const SPIN_ASK = `---
name: spin-ask
description: One task asks the operator while another computes at length.
runvil: 0
uses: [user-input, acme/counter]
---
# Spin ask

## Main
${lua(`local asker = tasks.spawn('## Ask')
local spinner = tasks.spawn('## Spin')
local spun = tasks.await(spinner)
local answer = tasks.await(asker)
return spun .. '|' .. answer`)}
## Ask
${lua(`return tools.call('user-input/ask', { question = 'Proceed?' })`)}
## Spin
${lua(`local n = 0
for i = 1, ${SPIN_ITERATIONS} do n = (n + i) % 1000003 end
local tick = tools.call('counter/tick', { label = 'spun', wait_ms = 20 })
store.write('spun.txt', tostring(n))
return tick .. ' ' .. n`)}`;

/** The files a MANY_FILES run writes: more than one alarm invocation may write to KV. */
export const MANY_FILES_COUNT = 1200;

/** Writes MANY_FILES_COUNT files, `many/0001.txt` (`file 1`) to `many/1200.txt`. */
export const MANY_FILES = `---
name: many-files
description: Writes more files than one invocation may write to KV.
runvil: 0
---
# Many files

## Write
${lua(`for i = 1, ${MANY_FILES_COUNT} do store.write(('many/%04d.txt'):format(i), 'file ' .. i) end
return 'wrote ' .. #store.list('many/')`)}`;

/**
 * A run to turn into a test and fork: two asks, a counter tick (trusted), a task that reads
 * the untrusted feed, and a model step whose prose holds both answers. The result shows what
 * each answer led to.
 */
export const FORKABLE = `---
name: forkable
description: Two asks, two tool calls (one untrusted, in a task) and a model step.
runvil: 0
uses: [user-input, acme/counter, acme/feed]
args:
  topic: { type: string, default: the launch }
---
# Forkable

## Gather
${lua(`var.owner = tools.call('user-input/ask', { question = 'Who owns ' .. args.topic .. '?' })
var.tick = tools.call('counter/tick', { label = var.owner })
store.write('owner.txt', var.owner)
local reader = tasks.spawn('## Read', { topic = var.owner })
var.feed_chars = tasks.await(reader)
var.date = tools.call('user-input/ask', { question = 'When does ' .. store.read('owner.txt') .. ' ship?' })`)}
## Draft

Plan: {{ var.owner }} ships {{ var.date }}.

## Finish
${lua(`return table.concat({ var.owner, var.date, var.tick, tostring(var.feed_chars), sys.replies['Draft'] }, '|')`)}
## Read
${lua(`local input = ...
local text = tools.call('feed/read', { topic = input.topic })
return #tostring(text)`)}`;
