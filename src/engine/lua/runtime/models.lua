-- The `models` global: model rounds over the entry's conversation (messages.lua), models.loop
-- with its scope gate, tool-call batches, local tools and task built-ins ("How the model's
-- tool calls run", "Tool errors"), and compaction.
return function(R, env)
local L = R.leaves
local json = R.json
local protocol = R.protocol
local conversation = R.conversation
local messages = R.namespaces.messages
local type, ipairs, select, tostring = type, ipairs, select, tostring
local table_concat = table.concat
local quote = json.encode_string
local set_own_metatable = R.raw.set_own_metatable


-- Rounds -------------------------------------------------------------------------------------

--- A role's label, its config as canonical JSON, and its round cap.
local function resolve_role(name)
  local role, config_or_problem, cap = L.role(name)
  if not role then R.raise('lua', config_or_problem) end
  return role, config_or_problem, cap
end

local function tools_json(rendered)
  if rendered == nil or rendered.empty then return 'null' end
  if rendered.json then return rendered.json end
  local parts = {}
  for i, entry in ipairs(rendered.list) do
    if entry.builtin then
      parts[i] = L.catalog('builtin:' .. entry.name)
    else
      parts[i] = protocol.tool_entry(quote(entry.name), quote(entry.description), entry.parameters_json)
    end
  end
  rendered.json = protocol.json_list(parts)
  return rendered.json
end

--- True for the error of a round refused by the context precheck: it was not sent, so it
--- takes no round number.
local function refused_for_context(err)
  return type(err) == 'table' and rawget(err, 'kind') == 'context'
end

--- One model round: sends the request as an effect (the driver reports the round's event),
--- returns the reply's content, the reply (see model_round) and the round's turn.
local function send_round(role, config_json, question, rendered)
  local ok, content_or_error, reply, turn = pcall(R.model_round_raw, role, config_json, question, rendered)
  if ok then return content_or_error, reply, turn end
  if refused_for_context(content_or_error) then R.round = R.round - 1 end
  error(content_or_error, 0)
end

--- The calls of a reply (see model_round) as a list of {id, name, arguments_json}.
local function reply_calls(reply)
  local calls = {}
  for k = 1, reply.count do
    local id, name, arguments_json = protocol.reply_call(reply, k)
    calls[k] = { id = id, name = name, arguments_json = arguments_json }
  end
  return calls
end

--- question is nil for a round over the entry's conversation, or the text of a one-off round
--- (models.infer), which sends only that question. Answers the reply's content, the reply
--- (protocol.lua's decode_reply) and the round's turn.
local head_role, head_config, head_start = nil, nil, nil
-- The tool list's JSON as the driver last got it: it keeps that, so a round sends the list
-- only when it changed (nil otherwise).
local sent_tools = nil
-- One table holds every round's fields: encode_round reads them at once, before anything else
-- runs, and a table per round was a visible share of a tool round's allocations.
local round = {}
local function model_round(role, config_json, question, rendered)
  R.round = R.round + 1
  local turn = R.round
  if role ~= head_role or config_json ~= head_config then
    head_role, head_config, head_start = role, config_json, protocol.round_head_start(config_json, quote(role))
  end
  round.head, round.role, round.turn, round.tool_map, round.fuse, round.one_off, round.fused_records =
    protocol.round_head(head_start, turn), role, turn, nil, false, false, false
  local texts, n
  if question then
    round.tools, round.one_off, round.from, round.count = 'null', true, 1, 1
    texts, n = { protocol.user_record(quote(question)) }, 1
  else
    local from, changed, count, fused_records = conversation.changes()
    local map = nil
    if rendered and not rendered.map_sent then
      rendered.map_sent = true
      local wires, ids = {}, {}
      for _, entry in ipairs(rendered.list) do
        if entry.tool then wires[#wires + 1], ids[#ids + 1] = quote(entry.name), quote(entry.tool) end
      end
      map = protocol.tool_map(wires, ids)
    end
    -- The driver may run the reply's calls with the round (see below); not while a prelude
    -- loads, where a tool call is refused.
    round.fuse = not R.loading_prelude
    local tools = tools_json(rendered)
    if tools == sent_tools then tools = nil else sent_tools = tools end
    round.tools, round.tool_map, round.from, round.count, round.fused_records = tools, map, from, count, fused_records
    texts, n = changed, count
  end
  local reply = R.model_effect(protocol.encode_round(round, texts, n))
  return reply.content, reply, turn
end
R.model_round_raw = model_round
model_round = send_round

local function infer(role, config_json, text)
  if type(text) == 'number' then text = R.scalar_text(text) end
  if type(text) ~= 'string' then R.raise('lua', 'models.infer takes text, got ' .. R.typename(text)) end
  return (model_round(role, config_json, text, nil))
end

-- Running the calls of one reply -------------------------------------------------------------

--- A task built-in the model called; it runs alone in its batch, and await_tasks may
--- suspend the loop until the tasks it names end.
local function builtin_result(call, turn)
  local ok, args = pcall(json.decode, call.arguments_json)
  if not ok or type(args) ~= 'table' then args = {} end
  local text, tainted
  local allow = R.scope.allow
  local target = call.name == 'task' and (type(args.target) == 'string' and args.target:match('^%s*(.-)%s*$') or '') or nil
  local allowed = allow == true
  if type(allow) == 'table' and target then
    for _, t in ipairs(allow) do if t == target then allowed = true end end
  end
  if target and not allowed then
    text = 'task: target `' .. target .. '` is not allowed; allowed targets: ' .. R.name_list(allow)
  else
    R.install_tasks()
    if target then args.target = target end
    text, tainted = R.task_builtin(call.name, args)
    -- What a task that had seen untrusted text handed back reaches the model as untrusted output.
    if tainted then text = L.untrusted(text) end
  end
  R.event('tool_call_succeeded', { alias = call.name, tool_call_id = call.id }, turn)
  R.event('tool_result', { alias = call.name, tool_call_id = call.id, content = text, trusted = not tainted }, turn)
  return text
end

local function run_batch(calls, from, to, rendered, turn, results, records)
  local batch = {}
  for i = from, to do
    local call = calls[i]
    local id = rendered.by_name[call.name].tool
    R.count_call(id)
    batch[#batch + 1] = { tool = id, name = call.name, args_json = call.arguments_json, caller = 'model', call_id = call.id, turn = turn }
  end
  -- Failures come back already wrapped as untrusted text: the model reads them as data.
  local answers = R.batch(batch)
  for i = from, to do
    local answer = answers[i - from + 1]
    results[i] = answer.text
    records[i] = answer.record
  end
end

local function run_calls(calls, rendered, turn)
  local results, records = {}, {}
  local i, n = 1, #calls
  while i <= n do
    local entry = rendered.by_name[calls[i].name]
    if entry.builtin then
      results[i] = builtin_result(calls[i], turn)
      i = i + 1
    elseif entry.alias then
      results[i] = R.run_local(R.scope.local_by_alias[entry.alias], calls[i].arguments_json, calls[i].id, turn)
      i = i + 1
    else
      -- Catalog calls run together until a call that must run alone.
      local j = i
      while j + 1 <= n do
        local nxt = rendered.by_name[calls[j + 1].name]
        if nxt.builtin or nxt.alias then break end
        j = j + 1
      end
      run_batch(calls, i, j, rendered, turn, results, records)
      i = j + 1
    end
  end
  return results, records
end

local function gate(calls, rendered, turn)
  for _, call in ipairs(calls) do
    if not rendered.by_name[call.name] then
      local names = {}
      for i, entry in ipairs(rendered.list) do names[i] = entry.name end
      local message = 'tool ' .. quote(call.name) .. " is not in this section's scope; in-scope aliases: " .. R.name_list(names)
      if R.catalog().by_wire[call.name] then message = message .. ' (a catalog tool that was not offered in this section)' end
      R.event('tool_call_failed', { alias = call.name, tool_call_id = call.id, error = message }, turn)
      R.raise('out_of_scope_tool', message, { name = call.name })
    end
  end
end

-- Compaction ---------------------------------------------------------------------------------

local compactor_list = {}
local compactors = R.namespaces.compactors
function compactors.add(fn)
  if type(fn) ~= 'function' then R.raise('lua', 'compactors.add takes a function(records) that returns the records to keep, got ' .. R.typename(fn)) end
  compactor_list[#compactor_list + 1] = fn
end
function compactors.clear() compactor_list = {} end

local SUMMARY_REQUEST = 'Summarize the conversation below for your own later use. Keep every fact, '
  .. 'decision, open question and tool result that still matters; leave out pleasantries. '
  .. 'Reply with the summary only.\n\n'

--- The default compactor: one round (no tools) summarizes the conversation; the summary
--- replaces it, followed by the user records that came after the last reply.
local function summarize(role, config_json, records)
  local lines, keep_from = {}, #records + 1
  for i = #records, 1, -1 do
    if records[i].role ~= 'user' then break end
    keep_from = i
  end
  for i = 1, keep_from - 1 do
    local r = records[i]
    local line = r.role .. ': ' .. (r.content or '')
    if r.tool_calls then line = line .. ' [calls ' .. json.try_encode(r.tool_calls) .. ']' end
    lines[#lines + 1] = line
  end
  if #lines == 0 then return records end
  local summary = model_round(role, config_json, SUMMARY_REQUEST .. table_concat(lines, '\n'), nil)
  local out = { { role = 'user', content = 'Summary of the conversation so far:\n' .. summary } }
  for i = keep_from, #records do out[#out + 1] = records[i] end
  return out
end

--- Replaces the conversation with what the compactors make of it. The section's rendered
--- tool list belongs to the section, so it stays as it is.
local function compact(role, config_json)
  if R.handler_depth > 0 then R.raise('lua', 'models.compact is unavailable inside a local tool handler') end
  local records = conversation.records()
  local before = #records
  if #compactor_list == 0 then
    local ok, summarized = pcall(summarize, role, config_json, records)
    if not ok then
      if type(summarized) == 'table' and rawget(summarized, 'kind') == 'context' then
        R.raise('model', summarized.message .. ', so the conversation is too long to summarize in one round; add a compactor with compactors.add')
      end
      error(summarized, 0)
    end
    records = summarized
  else
    for _, fn in ipairs(compactor_list) do
      records = fn(records)
      if type(records) ~= 'table' then R.raise('lua', 'a compactor must return a list of records, got ' .. R.typename(records)) end
    end
  end
  local kept = {}
  for i, r in ipairs(records) do kept[i] = conversation.as_record(r, i) end
  conversation.replace(kept)
  R.event('conversation_compacted', { before = before, after = #kept })
end

local function loop(role, config_json, cap)
  if R.handler_depth > 0 then
    R.raise('lua', 'models.loop is unavailable inside a local tool handler; a handler can ask a side question with models.infer')
  end
  local rounds = 0
  local compacted = false
  while true do
    if #messages == 0 then R.raise('lua', 'models.loop: messages is empty; add a message with messages:user(text) first') end
    local rendered = R.render_tools()
    if rounds >= cap then
      R.raise('tool', 'models.loop reached its round cap of ' .. cap .. ' rounds without a final reply')
    end
    rounds = rounds + 1
    -- The raw round, under this loop's own pcall, with what send_round does on a refusal.
    local ok, content, reply, turn = pcall(R.model_round_raw, role, config_json, nil, rendered)
    if not ok then
      local err = content
      if not refused_for_context(err) then error(err, 0) end
      R.round = R.round - 1
      -- A round too big for the context window: compact once, then retry it.
      if compacted then R.raise('model', err.message .. ', even after compacting the conversation') end
      compacted = true
      rounds = rounds - 1
      compact(role, config_json)
      goto continue
    end
    compacted = false
    local n = reply.count
    if n == 0 then
      conversation.push({ role = 'assistant', content = content }, reply.record)
      conversation.fused_from(nil)
      return content
    end
    -- When every call names a catalog tool of the rendered list, the loop would batch them
    -- all with nothing of its own in between; the driver then runs them with the round and
    -- sends each call's text and record after the reply's (the events are the same either
    -- way): protocol.fused_result.
    local fused = reply.fused
    local results, records
    if not fused then
      local calls = reply_calls(reply)
      gate(calls, rendered, turn)
      results, records = run_calls(calls, rendered, turn)
    end
    -- Presized for the common single call: a list grown from empty rehashes on its first key.
    local record_calls = n == 1 and { false } or {}
    for k = 1, n do
      local id, name, arguments_json = protocol.reply_call(reply, k)
      -- The driver ran a fused round's calls: they count against their tools here.
      if fused then R.count_call(rendered.by_name[name].tool) end
      local record_call = set_own_metatable({ id = id, name = name }, conversation.CallMT)
      record_calls[k] = record_call
      conversation.call_arguments[record_call] = arguments_json
    end
    local first = #messages + 1
    conversation.push({ role = 'assistant', content = content, tool_calls = record_calls }, reply.record)
    for k = 1, n do
      local result, record
      if fused then result, record = protocol.fused_result(reply, k) else result, record = results[k], records[k] end
      local data = { role = 'tool', content = result, tool_call_id = record_calls[k].id }
      if record then conversation.push(data, record) else messages[#messages + 1] = data end
    end
    -- After the pushes (a local tool's record, set through messages, clears it).
    conversation.fused_from(fused and first or nil)
    ::continue::
  end
end

-- The models global ---------------------------------------------------------------------------

local current_role = nil
local models = R.namespaces.models

local function role_arg(fname, role)
  if type(role) ~= 'string' then R.raise('lua', fname .. ' takes a role label, got ' .. R.typename(role)) end
  return role
end

function models.use(role)
  resolve_role(role_arg('models.use', role))
  current_role = role
end

function models.default(role)
  local problem = L.set_default_role(role_arg('models.default', role))
  if problem then R.raise('lua', problem) end
end

function models.infer(text)
  local role, config = resolve_role(current_role)
  return infer(role, config, text)
end

function models.compact()
  local role, config = resolve_role(current_role)
  compact(role, config)
end

function models.loop()
  return loop(resolve_role(current_role))
end

local handles = {}
local HandleMT = {
  __name = 'runvil.model',
  __index = {
    infer = function(self, text) local h = handles[self]; return infer(h.role, h.config, text) end,
    loop = function(self) local h = handles[self]; return loop(h.role, h.config, h.cap) end,
  },
  __newindex = function(_, k) R.raise('lua', 'model handles are frozen: cannot assign field ' .. quote(tostring(k))) end,
  __metatable = 'model',
}
function models.get(role)
  local name, config, cap = resolve_role(role_arg('models.get', role))
  local handle = L.newuserdata()
  R.raw.set_own_metatable_any(handle, HandleMT)
  handles[handle] = { role = name, config = config, cap = cap }
  return handle
end


--- A model step: the section's prose as a user message, then the loop.
R.model_step = function(e)
  messages:user(e.prose)
  local reply = models.loop()
  L.reply_done(reply)
end
end
