-- The `tasks` global and the model's task built-ins: tasks.spawn returns a task handle,
-- tasks.await and tasks.await_all wait on tasks (a suspension the Engine answers once they
-- end), tasks.fanout runs one arm per item. The Engine (src/engine/tasks.ts) runs them.
return function(R, env)
local L = R.leaves
local json = R.json
local type, select, tostring, ipairs = type, select, tostring, ipairs
local table_concat = table.concat
local quote = json.encode_string

-- Task handles: one sealed userdata per task in this VM ------------------------------------

local handle_id = setmetatable({}, { __mode = 'k' })
local handles = {}

local function check_handle(fname, t)
  local id = type(t) == 'userdata' and handle_id[t]
  if not id then R.raise('lua', fname .. ' takes a task handle from tasks.spawn, got ' .. R.typename(t)) end
  return id
end

local methods = {}
function methods.status(self)
  return (L.task_status(check_handle('status', self)))
end
function methods.cancel(self)
  L.task_cancel(check_handle('cancel', self), nil)
end

local TaskMT = {
  __name = 'runvil.task',
  __index = function(self, k)
    if k == 'id' then return handle_id[self] end
    return methods[k]
  end,
  __newindex = function(_, k)
    R.raise('lua', 'task handles are read-only: cannot assign field ' .. quote(tostring(k)))
  end,
  __tostring = function(self) return 'task ' .. handle_id[self] end,
  __metatable = 'task',
}

local function handle_for(id)
  local handle = handles[id]
  if handle then return handle end
  handle = L.newuserdata()
  R.raw.set_own_metatable_any(handle, TaskMT)
  handle_id[handle] = id
  handles[id] = handle
  return handle
end

-- The tasks this entry started (by Lua or by its model): the ones its model may name.
local started, started_set = {}, {}
local function note(id)
  started[#started + 1] = id
  started_set[id] = true
end

--- Starts a task; args_text is the JSON list its blocks receive as ...
local function spawn(name, args_text)
  local id = L.task_spawn(name, args_text)
  note(id)
  return id
end

--- Waits for tasks; their outcomes in order: { id, status, result } or { id, status, kind, message },
--- and whether any had seen untrusted text. For Lua a tainted task's text comes wrapped; for
--- the model's built-in (for_model) it comes as it is, and the built-in wraps its answer.
local function await_ids(ids, for_model)
  local list = {}
  for i, id in ipairs(ids) do list[i] = id end
  local text, tainted = R.request(R.protocol.encode_await(json.try_encode(list), for_model == true))
  return json.decode(text), tainted
end

local function value_of(outcome)
  if outcome.status == 'completed' then
    if outcome.result == R.null then return nil end
    return outcome.result
  end
  R.raise(outcome.kind, outcome.message, { task = outcome.id })
end

-- tasks ----------------------------------------------------------------------------------

local tasks = R.namespaces.tasks

function tasks.spawn(ref, ...)
  local name = R.walk.heading_arg('tasks.spawn', ref)
  local n = select('#', ...)
  if n > 1 then R.raise('lua', 'tasks.spawn takes a section heading and at most one input, got ' .. n .. ' inputs') end
  local args_text = '[]'
  local input = ...
  if input ~= nil then
    local text, err = json.try_encode(input, 'input')
    if not text then R.raise('lua', 'tasks.spawn input must have a JSON form: ' .. err) end
    args_text = '[' .. text .. ']'
  end
  return handle_for(spawn(name, args_text))
end

function tasks.await(t)
  return value_of(await_ids({ check_handle('tasks.await', t) })[1])
end

function tasks.await_all(list)
  if type(list) ~= 'table' then R.raise('lua', 'tasks.await_all takes a list of task handles, got ' .. R.typename(list)) end
  local ids = {}
  for i, t in ipairs(list) do ids[i] = check_handle('tasks.await_all', t) end
  local results = {}
  json.arrays[results] = true
  if #ids == 0 then return results end
  local outcomes = await_ids(ids)
  -- Every task has ended; the first failure in list order is raised.
  for _, outcome in ipairs(outcomes) do
    if outcome.status ~= 'completed' then value_of(outcome) end
  end
  for i, outcome in ipairs(outcomes) do results[i] = value_of(outcome) end
  return results
end

function tasks.fanout(ref, items)
  local name = R.walk.heading_arg('tasks.fanout', ref)
  if type(items) ~= 'table' then R.raise('lua', 'tasks.fanout takes a list of items, got ' .. R.typename(items)) end
  local list = {}
  for i, v in ipairs(items) do list[i] = v end
  local n = #list
  local results = {}
  json.arrays[results] = true
  if n == 0 then return results end
  local text, err = json.try_encode(list, 'items')
  if not text then R.raise('lua', 'tasks.fanout items must have a JSON form: ' .. err) end
  local ok, a, b, c = R.request(R.protocol.encode_fanout(name, text))
  if not ok then R.raise(a, b, c and { task = c } or nil) end
  local decoded = json.decode(a)
  for i = 1, n do
    local v = decoded[i]
    if v ~= R.null then results[i] = v end
  end
  return results
end

-- The model's task built-ins ---------------------------------------------------------------

local function unknown(fname, id)
  return fname .. ': no task ' .. quote(tostring(id)) .. ' was started in this section'
end

--- A task's status line, and whether it carries text of a task that had seen untrusted text.
local function status_line(id)
  local status, detail, tainted = L.task_status(id)
  if status == 'failed' then return id .. ': failed: ' .. tostring(detail), tainted end
  return id .. ': ' .. status, false
end

--- The ids a built-in names: its one id, its list of ids, or every task of this entry.
local function named_ids(fname, value)
  local ids
  if value == nil or value == R.null then
    ids = started
  elseif type(value) == 'table' then
    ids = {}
    for i, v in ipairs(value) do ids[i] = v end
  else
    ids = { value }
  end
  if #ids == 0 then return nil, fname .. ': no task was started in this section' end
  for _, id in ipairs(ids) do
    if not started_set[id] then return nil, unknown(fname, id) end
  end
  return ids
end

--- Runs a task built-in the model called (its target already allowed); returns the call's
--- text, and true when that text carries what a tainted task handed back (the caller wraps it).
function R.task_builtin(name, args)
  if name == 'task' then
    local target = type(args.target) == 'string' and args.target or ''
    local section, problem = L.find_section(target)
    if not section then return 'task: ' .. problem end
    local args_text = '[]'
    if args.input ~= nil then args_text = '[' .. (json.try_encode(args.input) or 'null') .. ']' end
    return spawn(section, args_text)
  end
  if name == 'task_status' then
    local ids, problem = named_ids('task_status', args.id)
    if not ids then return problem end
    local lines, any = {}, false
    for i, id in ipairs(ids) do
      local line, tainted = status_line(id)
      lines[i] = line
      any = any or tainted
    end
    return table_concat(lines, '\n'), any
  end
  if name == 'task_cancel' then
    if type(args.id) ~= 'string' then return 'task_cancel: missing id argument' end
    if not started_set[args.id] then return unknown('task_cancel', args.id) end
    local before = L.task_cancel(args.id, 'the model cancelled it')
    if before == 'running' then return args.id .. ': cancelled' end
    return 'task_cancel: task ' .. args.id .. ' already ended: ' .. before
  end
  local ids, problem = named_ids('await_tasks', args.ids)
  if not ids then return problem end
  local out = {}
  local outcomes, tainted = await_ids(ids, true)
  for i, outcome in ipairs(outcomes) do
    if outcome.status == 'completed' then
      out[i] = { id = outcome.id, status = 'completed', result = outcome.result }
    else
      out[i] = { id = outcome.id, status = outcome.status, error = outcome.message }
    end
  end
  return json.try_encode(out), tainted
end
end
