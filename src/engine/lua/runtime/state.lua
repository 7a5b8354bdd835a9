-- The run-state globals: var (a view onto the run-wide JSON document the Engine holds),
-- store (the run's files, every call an effect), sys (run facts), log and untrusted.
local R = ...
local L = R.leaves
local json = R.json
local type, tostring, select, setmetatable, rawequal, raw_rawget = type, tostring, select, setmetatable, rawequal, rawget
local string_format, table_concat, math_type = string.format, table.concat, math.type

local M = {}

-- var -----------------------------------------------------------------------------------

-- What the leaf var_get answers first (protocol.lua's VAR_TAGS).
local VAR_TABLE, VAR_NULL = R.protocol.VAR_TAGS.table, R.protocol.VAR_TAGS.null

local function key_text(k)
  if type(k) == 'string' then return k end
  if math_type(k) == 'integer' then return string_format('%d', k) end
  return R.typename(k)
end

local function path_json(path)
  -- The root's path is an empty list, which the encoder would write as {}.
  if #path == 0 then return '[]' end
  return json.try_encode(path)
end

local function dotted(path)
  local parts = { 'var' }
  for _, k in ipairs(path) do
    if type(k) == 'string' then parts[#parts + 1] = '.' .. k
    else parts[#parts + 1] = '[' .. k .. ']' end
  end
  return table_concat(parts)
end
M.dotted = dotted

local function extend(path, k)
  local p = {}
  for i = 1, #path do p[i] = path[i] end
  p[#p + 1] = k
  return p
end

--- A view of var at path; read_only views refuse writes (a Pack prelude's view).
local function view(path, read_only, cache)
  local key = path_json(path)
  local cached = cache[key]
  if cached then return cached end
  local proxy = {}
  local mt = {}
  mt.__index = function(_, k)
    if type(k) ~= 'string' and math_type(k) ~= 'integer' then return nil end
    local child = extend(path, k)
    local tag, value = L.var_get(path_json(child))
    if tag == VAR_TABLE then return view(child, read_only, cache) end
    if tag == VAR_NULL then return R.null end
    return value
  end
  mt.__newindex = function(_, k, v)
    if read_only then
      R.raise('lua', (#path == 0 and 'var' or dotted(path)) .. " is read-only inside a Pack prelude; cannot set '" .. key_text(k) .. "'")
    end
    if type(k) ~= 'string' and math_type(k) ~= 'integer' then
      R.raise('lua', dotted(path) .. ' keys must be strings or integers, got ' .. R.typename(k))
    end
    local child = extend(path, k)
    local text = nil
    if v ~= nil then
      local err
      text, err = json.try_encode(v, dotted(child))
      if not text then R.raise('lua', 'cannot assign to ' .. dotted(child) .. ': ' .. err) end
    end
    local problem = L.var_set(path_json(child), text)
    if problem then R.raise('lua', problem) end
  end
  mt.__len = function() return L.var_len(key) end
  mt.__pairs = function()
    local keys = json.decode(L.var_keys(key))
    local i = 0
    return function()
      while true do
        i = i + 1
        local k = keys[i]
        if k == nil then return nil end
        local v = proxy[k]
        if v ~= nil then return k, v end
      end
    end, nil, nil
  end
  mt.__metatable = read_only and 'var is read-only' or 'var'
  mt[R.SEALED] = dotted(path)
  mt.__tostring = function() return 'var' .. (#path > 0 and (' view of ' .. dotted(path)) or '') end
  setmetatable(proxy, mt)
  json.views[proxy] = function() return L.var_json(key) end
  cache[key] = proxy
  return proxy
end

--- The var global of this VM; read_only for Pack preludes.
function M.var(read_only)
  return view({}, read_only, setmetatable({}, { __mode = 'v' }))
end

-- store ---------------------------------------------------------------------------------

local function text_arg(fname, what, v)
  if type(v) ~= 'string' then
    R.raise('lua', fname .. ' takes ' .. what .. ' as a string, got ' .. R.typename(v))
  end
  return v
end

function M.store()
  local store = {}
  function store.read(path)
    text_arg('store.read', 'a path', path)
    return R.effect('store.read', json.try_encode({ path = path }))
  end
  function store.write(path, text)
    text_arg('store.write', 'a path', path)
    text_arg('store.write', 'the text', text)
    R.effect('store.write', json.try_encode({ path = path, text = text }))
  end
  function store.append(path, text)
    text_arg('store.append', 'a path', path)
    text_arg('store.append', 'the text', text)
    R.effect('store.append', json.try_encode({ path = path, text = text }))
  end
  function store.list(prefix)
    if prefix ~= nil then text_arg('store.list', 'a prefix', prefix) end
    local listed = json.decode(R.effect('store.list', json.try_encode({ prefix = prefix or '' })))
    return listed
  end
  function store.delete(path)
    text_arg('store.delete', 'a path', path)
    return R.effect('store.delete', json.try_encode({ path = path })) == 'true'
  end
  return store
end

-- sys, log, untrusted -------------------------------------------------------------------

-- Sealing ---------------------------------------------------------------------------------
-- A sealed object is an empty proxy whose metatable is locked (__metatable) and marked with
-- R.SEALED, a key no section code can name: the guarded rawset below refuses any table so
-- marked, so neither rawset nor a write can reach the backing data, rawget/next/rawlen see
-- the empty proxy, and pairs walks the backing table through a closure that never hands
-- the table itself out (a for loop's state value is nil).

R.SEALED = setmetatable({}, { __name = 'runvil.sealed' })
local SEALED = R.SEALED

--- pairs over t for a sealed object: the same keys and values, with no state value to grab.
function R.sealed_pairs(t)
  local f, s, c = R.env_pairs(t)
  return function(_, k) return f(s, k) end, nil, c
end
local sealed_pairs = R.sealed_pairs

--- A table that reads through to t and refuses every write; name is used in the refusal.
function M.sealed(name, t)
  return setmetatable({}, {
    __index = t,
    __newindex = function(_, k) R.raise('lua', name .. ' is read-only; cannot set ' .. "'" .. key_text(k) .. "'") end,
    __metatable = name .. ' is sealed',
    __pairs = function() return sealed_pairs(t) end,
    __len = function() return #t end,
    [SEALED] = name,
  })
end

local raw_getmetatable, raw_rawset = R.raw.getmetatable_any, rawset
--- The sandbox's rawset: Lua's own, except on a sealed object, which it refuses as a write would.
function M.rawset(t, k, v)
  local mt = raw_getmetatable(t)
  if type(mt) == 'table' and raw_rawget(mt, SEALED) then
    R.raise('lua', "rawset cannot write to " .. tostring(raw_rawget(mt, SEALED)) .. ": it is sealed; cannot set '" .. key_text(k) .. "'")
  end
  local rawset = raw_rawset
  rawset(t, k, v)
  return t
end

function M.sys(facts)
  local live = setmetatable({}, {
    __index = function(_, k)
      if k == 'round' then return R.round end
      if k == 'replies' then return json.decode(L.fact('replies')) end
      return nil
    end,
  })
  for k, v in pairs(facts) do rawset(live, k, v) end
  rawset(live, 'now', function() return math.tointeger(tonumber(R.effect('sys.now', '{}'))) end)
  return M.sealed('sys', live)
end

function M.log(...)
  local n = select('#', ...)
  local parts = {}
  for i = 1, n do parts[i] = tostring((select(i, ...))) end
  R.event('log', { message = table_concat(parts, '\t') })
end

--- The ui global: what a run shows its operator without asking anything.
function M.ui()
  local ui = {}
  local function text_of(fname, text)
    if type(text) == 'number' then text = R.scalar_text(text) end
    if type(text) ~= 'string' then R.raise('lua', fname .. ' takes text, got ' .. R.typename(text)) end
    return text
  end
  function ui.say(text) R.event('ui_message', { text = text_of('ui.say', text) }) end
  function ui.status(text) R.event('ui_status', { text = text_of('ui.status', text) }) end
  return M.sealed('ui', ui)
end

--- Holds back the untrusted args (a trigger's payload; docs/language.md, "Untrusted args")
--- from args and argv until the chain reads one by name, walks either table with pairs or
--- encodes it: then the leaf `untrusted_args` marks the chain as having seen untrusted text
--- and gives their values wrapped in the run's envelope, and both tables hold them as plain
--- values from there on. rawget and next see only what the tables hold so far.
function M.hold_untrusted_args(args, argv, names)
  local held, guards, revealed = {}, {}, false
  for _, name in ipairs(names) do held[name] = true end
  local function reveal()
    if revealed then return end
    revealed = true
    local values = json.decode(L.untrusted_args())
    for t, mt in next, guards do
      -- Unless the section gave the table a metatable of its own.
      if raw_getmetatable(t) == mt then setmetatable(t, nil) end
      json.views[t] = nil
    end
    for _, name in ipairs(names) do
      -- A value the section set before its first read stays: it is the section's own.
      if raw_rawget(args, name) == nil then raw_rawset(args, name, values[name]) end
      if raw_rawget(argv, name) == nil then raw_rawset(argv, name, json.copy(values[name])) end
    end
  end
  local function encoded(t)
    reveal()
    local text, err = json.try_encode(t)
    if not text then R.raise('lua', 'json.encode: ' .. err) end
    return text
  end
  for _, t in ipairs({ args, argv }) do
    local mt = {
      __index = function(self, k)
        if not held[k] then return nil end
        reveal()
        return raw_rawget(self, k)
      end,
      __pairs = function(self)
        reveal()
        return R.env_pairs(self)
      end,
    }
    guards[t] = mt
    setmetatable(t, mt)
    json.views[t] = encoded
  end
end

function M.untrusted(text)
  if type(text) == 'number' then text = R.scalar_text(text) end
  if type(text) ~= 'string' then R.raise('lua', 'untrusted takes text, got ' .. R.typename(text)) end
  return L.untrusted(text)
end

return M
