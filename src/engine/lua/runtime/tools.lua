-- The `tools` and `packs` globals: Tool and Pack objects, offers and the section's tool
-- scope, local tools, tools.call and tools.calls (the chapter's "Tool objects and Pack
-- objects" through "What a tool returns", and "Defining local tools with tools.offer_local").
return function(R, env)
local L = R.leaves
local json = R.json
local type, select, ipairs, rawget, tostring = type, select, ipairs, rawget, tostring
local table_concat, table_sort = table.concat, table.sort
local set_own_metatable_any = R.raw.set_own_metatable_any

local FIXED = ": the section's tool list is fixed at its first models.loop round; make every offer before the first loop, or offer in another section"
local BUILTINS = { task = true, task_cancel = true, task_status = true, await_tasks = true }

local function quote(s) return json.encode_string(s) end
local function name_list(names)
  local parts = {}
  for i, n in ipairs(names) do parts[i] = quote(n) end
  return '[' .. table_concat(parts, ', ') .. ']'
end
R.name_list = name_list

-- The catalog, read once per VM when first needed ------------------------------------------

local catalog
local tool_data = setmetatable({}, { __mode = 'k' })  -- Tool object -> { id, description, pack }
local pack_data = setmetatable({}, { __mode = 'k' })  -- Pack object -> { name, tool_ids }
local tool_objects, pack_objects = {}, {}

local ToolMT = {
  __name = 'runvil.tool',
  __index = function(self, k)
    local d = tool_data[self]
    if k == 'pack' then return pack_objects[d.pack] end
    if k == 'id' or k == 'description' then return d[k] end
    return nil
  end,
  __newindex = function(_, k)
    R.raise('lua', 'Tool objects are frozen: cannot assign field ' .. quote(tostring(k)))
  end,
  __tostring = function(self) return 'tool ' .. tool_data[self].id end,
  __metatable = 'Tool',
}
local PackMT = {
  __name = 'runvil.pack',
  __index = function(self, k)
    local d = pack_data[self]
    if k == 'name' then return d.name end
    if k == 'tools' then
      local list = {}
      for _, id in ipairs(d.tool_ids) do list[#list + 1] = tool_objects[id] end
      return list
    end
    return nil
  end,
  __newindex = function(_, k)
    R.raise('lua', 'Pack objects are frozen: cannot assign field ' .. quote(tostring(k)))
  end,
  __tostring = function(self) return 'Pack ' .. pack_data[self].name end,
  __metatable = 'Pack',
}

local function load_catalog()
  if catalog then return catalog end
  -- The leaf answers plain values, not JSON: decoding JSON in Lua costs more than the rest of
  -- this function. A tool's wire is nil for a tool the run left out of its offering.
  catalog = R.protocol.decode_catalog(table.pack(L.catalog()))
  catalog.by_id, catalog.by_wire, catalog.unavailable_by_id, catalog.packs_by_id = {}, {}, {}, {}
  catalog.offering = {}
  for _, t in ipairs(catalog.tools) do
    catalog.by_id[t.id] = t
    if t.wire ~= nil then
      catalog.by_wire[t.wire] = t
      catalog.offering[#catalog.offering + 1] = t
    end
  end
  for _, u in ipairs(catalog.unavailable) do catalog.unavailable_by_id[u.id] = u.reason end
  for _, p in ipairs(catalog.packs) do
    catalog.packs_by_id[p.id] = p
    local ids = {}
    for _, t in ipairs(catalog.offering) do if t.pack == p.id then ids[#ids + 1] = t.id end end
    p.tool_ids = ids
    local object = L.newuserdata()
    set_own_metatable_any(object, PackMT)
    pack_data[object] = { name = p.id, tool_ids = ids }
    pack_objects[p.id] = object
  end
  for _, t in ipairs(catalog.offering) do
    local object = L.newuserdata()
    set_own_metatable_any(object, ToolMT)
    tool_data[object] = { id = t.id, description = t.description, pack = t.pack }
    tool_objects[t.id] = object
  end
  return catalog
end
R.catalog = load_catalog

local function is_tool(v) return type(v) == 'userdata' and tool_data[v] ~= nil end
local function is_pack(v) return type(v) == 'userdata' and pack_data[v] ~= nil end

-- The section's scope ------------------------------------------------------------------------

local scope = {
  offered = {}, offered_set = {},   -- tool ids from tools.offer, first-offer order
  packs = {}, packs_set = {},       -- Pack ids from packs.offer
  locals = {}, local_by_alias = {}, -- local tools in definition order
  allow = nil,                      -- nil, true (any section) or a list of headings
  rendered = nil,                   -- the rendered tool list once the first round built it
}
R.scope = scope

local function check_not_rendered(fname)
  if scope.rendered then R.raise('lua', fname .. FIXED) end
end

--- The rendered tool list: built once, at the section's first loop round that builds tools.
function R.render_tools()
  if scope.rendered then return scope.rendered end
  local cat = load_catalog()
  local list, seen = {}, {}
  local shadowed = {}
  for _, l in ipairs(scope.locals) do shadowed[l.alias] = true end
  local function add_catalog(id)
    local t = cat.by_id[id]
    if seen[id] or shadowed[t.wire] then return end
    seen[id] = true
    list[#list + 1] = { name = t.wire, description = t.description, parameters_json = L.catalog(id), tool = id }
  end
  for _, id in ipairs(scope.offered) do add_catalog(id) end
  for _, pack in ipairs(scope.packs) do
    for _, id in ipairs(cat.packs_by_id[pack].tool_ids) do add_catalog(id) end
  end
  for _, l in ipairs(scope.locals) do
    list[#list + 1] = { name = l.alias, description = l.description, parameters_json = l.schema, alias = l.alias }
  end
  if scope.allow then
    for _, b in ipairs({ 'task', 'task_cancel', 'task_status', 'await_tasks' }) do
      list[#list + 1] = { name = b, builtin = true }
    end
  end
  local names = {}
  for i, entry in ipairs(list) do names[entry.name] = entry; list[i].index = i end
  R.event('tool_scope_validation_started', { tools = #list })
  scope.rendered = { list = list, by_name = names, empty = #list == 0 and not scope.allow }
  local advertised = {}
  for _, entry in ipairs(list) do advertised[#advertised + 1] = entry.name end
  R.event('tool_scope_validation_succeeded', { tools = advertised })
  return scope.rendered
end

-- tools.calls ------------------------------------------------------------------------------

local counts = nil  -- name -> count, once the section's first tool call set it up
-- How far into the scope's offered tools and Packs the counts are seeded: both lists only
-- grow, so a call seeds only what was added since the last one (every tool round counts).
local seeded_offered, seeded_packs = 0, 0
local function seed_counts()
  if counts then
    -- Each call picks up the scope as it stands: tools offered since get their 0.
    local offered, packs = scope.offered, scope.packs
    for i = seeded_offered + 1, #offered do
      local id = offered[i]
      if counts[id] == nil then counts[id] = 0 end
    end
    seeded_offered = #offered
    for i = seeded_packs + 1, #packs do
      for _, id in ipairs(load_catalog().packs_by_id[packs[i]].tool_ids) do if counts[id] == nil then counts[id] = 0 end end
    end
    seeded_packs = #packs
    return
  end
  counts = {}
  seed_counts()
  local proxy = setmetatable({}, {
    __index = function(_, key)
      local n = counts[key]
      if n ~= nil then return n end
      local names = {}
      for k in R.env_pairs(counts) do names[#names + 1] = k end
      table_sort(names)
      local message = 'tools.calls: ' .. quote(tostring(key)) .. ' has no seeded count; seeded names: ' .. name_list(names)
      local t = type(key) == 'string' and load_catalog().by_id[key]
      if t and t.wire then
        message = message .. ' (a catalog tool that was neither offered in this section nor called with tools.call)'
      elseif #names > 0 then
        message = message .. ' - check for typos or offer it with tools.offer'
      end
      R.raise('lua', message)
    end,
    __newindex = function() R.raise('lua', 'tools.calls is read-only') end,
    __pairs = function() return function() return nil end, nil, nil end,
    __len = function() return 0 end,
    __metatable = 'tools.calls',
    [R.SEALED] = 'tools.calls',
  })
  rawset(R.tools, 'calls', proxy)
end

--- Counts one dispatch of name (a tool id or a local alias), setting up the counts first.
function R.count_call(name)
  seed_counts()
  counts[name] = (counts[name] or 0) + 1
end

-- tools ------------------------------------------------------------------------------------

local tools = R.namespaces.tools
R.tools = tools

function tools.get(id)
  if type(id) ~= 'string' then R.raise('lua', 'tools.get takes a tool id, got ' .. R.typename(id)) end
  load_catalog()
  return tool_objects[id]
end

local function list_tools(declared)
  local cat = load_catalog()
  local out = {}
  for _, t in ipairs(cat.offering) do
    if cat.packs_by_id[t.pack].declared == declared then out[#out + 1] = tool_objects[t.id] end
  end
  return out
end
function tools.required() return list_tools(true) end
function tools.extras() return list_tools(false) end

local function tool_entry(fname, v)
  if type(v) == 'string' then
    local t = load_catalog().by_id[v]
    if not t or not t.wire then R.raise('lua', fname .. ': ' .. quote(v) .. ' is not a catalog tool in this run') end
    return t.id
  end
  if is_tool(v) then return tool_data[v].id end
  R.raise('lua', fname .. ' takes tool ids, tool objects, or arrays of them, got ' .. R.typename(v))
end

function tools.offer(...)
  check_not_rendered('tools.offer')
  local n = select('#', ...)
  local arg = ...
  if n > 1 then R.raise('lua', 'tools.offer takes one tool or a list of them, got extra ' .. R.typename((select(2, ...)))) end
  if arg == nil then return end
  local ids = {}
  if type(arg) == 'table' then
    for _, v in ipairs(arg) do ids[#ids + 1] = tool_entry('tools.offer', v) end
  else
    ids[1] = tool_entry('tools.offer', arg)
  end
  for _, id in ipairs(ids) do
    if not scope.offered_set[id] then
      scope.offered_set[id] = true
      scope.offered[#scope.offered + 1] = id
    end
  end
end

local VALID_TYPES = { string = true, integer = true, number = true, boolean = true }

function tools.offer_local(alias, description, params, handler)
  check_not_rendered('tools.offer_local')
  if type(alias) ~= 'string' then R.raise('lua', 'tools.offer_local takes an alias string first, got ' .. R.typename(alias)) end
  if not (alias:match('^[A-Za-z][A-Za-z0-9_-]*$') and #alias <= 64) then
    R.raise('lua', 'invalid alias ' .. quote(alias) .. ': expected [A-Za-z][A-Za-z0-9_-]{0,63}')
  end
  if scope.local_by_alias[alias] then R.raise('lua', 'tools.offer_local alias ' .. quote(alias) .. ' is already registered') end
  if type(description) ~= 'string' then R.raise('lua', 'tools.offer_local takes a description string second, got ' .. R.typename(description)) end
  if type(params) ~= 'table' then R.raise('lua', 'tools.offer_local takes a params table third, got ' .. R.typename(params)) end
  if type(handler) ~= 'function' then R.raise('lua', 'tools.offer_local takes a handler function fourth, got ' .. R.typename(handler)) end
  local names = {}
  for k in R.env_pairs(params) do
    if type(k) ~= 'string' then R.raise('lua', 'tools.offer_local param names must be strings, got ' .. R.typename(k)) end
    names[#names + 1] = k
  end
  table_sort(names)
  local props, required = {}, {}
  for i, name in ipairs(names) do
    local spec = params[name]
    local ptype, pdesc
    if type(spec) == 'string' then
      ptype = spec
    elseif type(spec) == 'table' then
      ptype = rawget(spec, 1)
      if type(ptype) ~= 'string' then
        error("bad argument to 'tools.offer_local' (param " .. quote(name) .. ': cannot convert ' .. R.typename(ptype) .. ' to a type name)', 2)
      end
      pdesc = rawget(spec, 2)
      if pdesc ~= nil and type(pdesc) ~= 'string' then pdesc = tostring(pdesc) end
    else
      R.raise('lua', 'tools.offer_local param ' .. quote(name) .. ' must be a type string or a {type, description} array')
    end
    if not VALID_TYPES[ptype] then
      R.raise('lua', 'tools.offer_local param ' .. quote(name) .. ' has unsupported type ' .. quote(ptype) .. ': expected "string", "integer", "number", or "boolean"')
    end
    props[i] = quote(name) .. ':{"type":' .. quote(ptype) .. (pdesc and (',"description":' .. quote(pdesc)) or '') .. '}'
    required[i] = quote(name)
  end
  -- Written by hand in the chapter's key order, names sorted, so the text is the same on every run.
  local schema = '{"type":"object","properties":{' .. table_concat(props, ',') .. '},"required":[' .. table_concat(required, ',') .. ']}'
  local entry = { alias = alias, description = description, schema = schema, handler = handler }
  scope.locals[#scope.locals + 1] = entry
  scope.local_by_alias[alias] = entry
end

function tools.allow_tasks(...)
  local targets = ...
  if targets == nil then scope.allow = true; return end
  if type(targets) ~= 'table' then
    R.raise('lua', 'tools.allow_tasks targets must be a list of section headings, got ' .. R.typename(targets))
  end
  local list = {}
  for _, v in ipairs(targets) do
    if type(v) ~= 'string' then R.raise('lua', 'tools.allow_tasks targets must be section heading strings, got ' .. R.typename(v)) end
    local trimmed = v:match('^%s*(.-)%s*$')
    if trimmed == '' then R.raise('lua', 'tools.allow_tasks targets must be non-empty section headings') end
    list[#list + 1] = trimmed
  end
  if #list == 0 then
    R.raise('lua', 'tools.allow_tasks targets must name at least one section; call it with no argument to allow any section')
  end
  scope.allow = list
end

-- Calling tools ----------------------------------------------------------------------------

local function encode_args(args)
  if args == nil then return '{}' end
  if type(args) ~= 'table' then R.raise('lua', 'args must be a table, got ' .. R.typename(args)) end
  if next(args) == nil and not json.arrays[args] then return '{}' end
  local text, err = json.try_encode(args, 'args')
  if not text then R.raise('lua', 'args must be a JSON-representable table: ' .. err) end
  if text:sub(1, 1) ~= '{' then R.raise('lua', 'args must be a JSON-representable table: args is a list; a tool takes named arguments') end
  return text
end

--- Runs a local tool's handler inline; returns its text or raises what it raised.
function R.run_local(entry, args_json, call_id, turn)
  R.count_call(entry.alias)
  local args = json.decode(args_json)
  R.handler_depth = R.handler_depth + 1
  local results = table.pack(pcall(entry.handler, args))
  R.handler_depth = R.handler_depth - 1
  local ok, value = results[1], results[2]
  local text
  if ok then
    ok, text = pcall(function() return value == nil and '' or R.scalar_text(value) end)
    if not ok then value = text end
  end
  if not ok then
    if not R.stopping() then
      R.event('tool_call_failed', { alias = entry.alias, tool_call_id = call_id, error = select(2, R.describe_error(value)) }, turn)
    end
    error(value, 0)
  end
  R.event('tool_call_succeeded', { alias = entry.alias, tool_call_id = call_id }, turn)
  R.event('tool_result', { alias = entry.alias, tool_call_id = call_id, content = text, trusted = true }, turn)
  return text
end

local function resolve_script_tool(tool)
  if type(tool) == 'string' then
    if BUILTINS[tool] then
      R.raise('unbound_tool', 'tool ' .. quote(tool) .. ' is a task built-in, which only the model can call; use the tasks namespace from Lua', { name = tool })
    end
    local entry = scope.local_by_alias[tool]
    if entry then return nil, entry end
    local cat = load_catalog()
    local t = cat.by_id[tool]
    if not t then
      local ids = {}
      for _, o in ipairs(cat.offering) do ids[#ids + 1] = o.id end
      R.raise('unbound_tool', 'tool ' .. quote(tool) .. ' is not a tool in this run; catalog tools: ' .. name_list(ids), { name = tool })
    end
    return t
  end
  if is_tool(tool) then return load_catalog().by_id[tool_data[tool].id] end
  R.raise('lua', 'tools.call takes a tool id, a local alias, or a tool object, got ' .. R.typename(tool))
end

function tools.call(tool, args)
  local t, entry = resolve_script_tool(tool)
  local args_json = encode_args(args)
  if entry then return R.run_local(entry, args_json, '') end
  local name = t.wire or t.id
  R.count_call(t.id)
  -- The call's arguments, for whoever watches the run (a model's calls are in assistant_tool_calls).
  R.event_json('tool_call_started', '{"alias":' .. quote(name) .. ',"arguments":' .. args_json .. ',"tool":' .. quote(t.id) .. ',"tool_call_id":""}')
  local answer = R.batch({ { tool = t.id, name = name, args_json = args_json, caller = 'script', turn = R.round } })[1]
  if not answer.ok then
    R.event('tool_call_failed', { alias = name, tool = t.id, tool_call_id = '', error = answer.text })
    R.raise('tool', 'tool call failure: ' .. answer.text)
  end
  local text = answer.text
  local value = text
  if t.output == 'structured' then
    local ok, decoded = pcall(json.decode, text)
    if not ok then
      local detail = tostring(decoded):gsub('^json%.decode: ', '')
      R.event('tool_call_failed', { alias = name, tool = t.id, tool_call_id = '', error = 'structured tool ' .. quote(name) .. ' returned invalid JSON' })
      R.raise('tool', 'structured tool ' .. quote(name) .. ' returned invalid JSON: ' .. detail)
    end
    value = decoded
  end
  R.event('tool_call_succeeded', { alias = name, tool = t.id, tool_call_id = '' })
  R.event('tool_result', { alias = name, tool = t.id, tool_call_id = '', content = text, trusted = t.trusted })
  return value
end

-- packs ------------------------------------------------------------------------------------

local packs = R.namespaces.packs

function packs.get(name)
  if type(name) ~= 'string' then R.raise('lua', 'packs.get takes a Pack id, got ' .. R.typename(name)) end
  load_catalog()
  return pack_objects[name]
end

local function list_packs(declared)
  local out = {}
  for _, p in ipairs(load_catalog().packs) do
    if p.declared == declared then out[#out + 1] = pack_objects[p.id] end
  end
  return out
end
function packs.required() return list_packs(true) end
function packs.extras() return list_packs(false) end

local PACK_FORMS = 'packs.offer takes a Pack id, a Pack object, or a list of them, got '
local function pack_entry(v)
  if is_pack(v) then return pack_data[v].name end
  if type(v) ~= 'string' then R.raise('lua', PACK_FORMS .. R.typename(v)) end
  local problem = L.pack_id_problem(v)
  if problem then R.raise('lua', PACK_FORMS .. quote(v) .. ': invalid Pack id: ' .. problem) end
  local cat = load_catalog()
  local reason = cat.unavailable_by_id[v]
  if reason then R.raise('lua', 'packs.offer: the ' .. v .. ' Pack is unavailable in this run: ' .. reason) end
  if not cat.packs_by_id[v] then
    R.raise('lua', 'packs.offer: no Pack named ' .. quote(v) .. ' in this run; declare it under uses: to require it, or offer it only when packs.get(' .. quote(v) .. ') returns it')
  end
  return v
end

function packs.offer(...)
  check_not_rendered('packs.offer')
  local n = select('#', ...)
  local arg = ...
  if n > 1 then R.raise('lua', 'packs.offer takes one Pack or a list of them, got extra ' .. R.typename((select(2, ...)))) end
  local ids = {}
  if type(arg) == 'table' then
    for _, v in ipairs(arg) do
      if type(v) == 'table' then R.raise('lua', PACK_FORMS .. 'table') end
      ids[#ids + 1] = pack_entry(v)
    end
  else
    ids[1] = pack_entry(arg)
  end
  for _, id in ipairs(ids) do
    if not scope.packs_set[id] then
      scope.packs_set[id] = true
      scope.packs[#scope.packs + 1] = id
    end
  end
end

end
