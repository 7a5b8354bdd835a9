-- Pack preludes ("Pack preludes"): each declared Pack's prelude runs in a restricted
-- environment of its own, in uses: order, before any block; its globals install into the
-- section, tables sealed at their top level, reserved names refused.
return function(R, env)
local L = R.leaves
local type, ipairs, tostring, math_type = type, ipairs, tostring, math.type
local table_sort = table.sort

local ENGINE_GLOBALS = { 'args', 'argv', 'call', 'compactors', 'item', 'json', 'jump', 'log', 'messages',
  'models', 'packs', 'prompt', 'prose', 'require', 'store', 'sys', 'tasks', 'tools', 'ui', 'untrusted', 'var' }
local KEYWORDS = { 'and', 'break', 'do', 'else', 'elseif', 'end', 'false', 'for', 'function', 'global', 'goto',
  'if', 'in', 'local', 'nil', 'not', 'or', 'repeat', 'return', 'then', 'true', 'until', 'while' }
local STANDARD = { '_G', '_VERSION', 'assert', 'collectgarbage', 'coroutine', 'debug', 'dofile', 'error',
  'getmetatable', 'io', 'ipairs', 'load', 'loadfile', 'math', 'next', 'os', 'package', 'pairs', 'pcall',
  'print', 'rawequal', 'rawget', 'rawlen', 'rawset', 'select', 'setmetatable', 'string', 'table',
  'tonumber', 'tostring', 'type', 'utf8', 'warn', 'xpcall' }
local reserved = {}
for _, n in ipairs(ENGINE_GLOBALS) do reserved[n] = 'an Engine global' end
for _, n in ipairs(STANDARD) do reserved[n] = 'a Lua standard-library global' end
for _, n in ipairs(KEYWORDS) do reserved[n] = 'a Lua keyword' end

local PRELUDE_BASE = { 'assert', 'error', 'getmetatable', 'ipairs', 'next', 'pcall', 'select',
  'setmetatable', 'tonumber', 'tostring', 'type', 'xpcall' }

local function copy(t) local c = {} for k, v in next, t do c[k] = v end return c end

local function key_text(k)
  if type(k) == 'string' then return k end
  if math_type(k) == 'integer' then return tostring(k) end
  return R.typename(k)
end

local function prelude_env(read_only_var)
  local p = {}
  for _, n in ipairs(PRELUDE_BASE) do p[n] = env[n] end
  p.pairs = R.env_pairs
  p.string, p.table, p.math = copy(env.string), copy(env.table), copy(env.math)
  p.tools, p.store, p.untrusted, p.json = env.tools, env.store, env.untrusted, env.json
  p.var = read_only_var
  return p
end

local function seal(name, pack, t)
  return setmetatable({}, {
    __index = t,
    __newindex = function(_, k)
      R.raise('lua', name .. ' is read-only: Pack `' .. pack .. "` defines it; cannot set '" .. key_text(k) .. "'")
    end,
    __pairs = function() return function() return nil end, nil, nil end,
    __metatable = name .. ' is sealed',
    [R.SEALED] = name,
  })
end

local function failure(pack, message)
  return 'Pack `' .. pack .. '`: ' .. message
end

--- Installs every declared Pack's prelude; raises a lua error naming the Pack on failure.
function R.install_preludes()
  local count = L.prelude(0)
  if count == 0 then return end
  local read_only_var = R.state.var(true)
  local owners = {}
  for i = 1, count do
    local pack, source = L.prelude(i)
    local p = prelude_env(read_only_var)
    local before = {}
    for k, v in next, p do before[k] = v end
    local fn, err = R.raw.load(source, '=pack:' .. pack, 't', p)
    local traceback = nil
    if fn then
      R.loading_prelude = pack
      local ok, raised = xpcall(fn, function(e)
        if not rawequal(e, R.STOP) then traceback = R.raw.traceback(nil, 2) end
        return e
      end, pack)
      R.loading_prelude = nil
      if rawequal(raised, R.STOP) then error(R.STOP, 0) end
      err = not ok and select(2, R.describe_error(raised)) or nil
    end
    if err then
      R.raise('lua', failure(pack, 'its prelude failed to load: ' .. err
        .. '. A prelude only defines functions; it must not call tools while loading.')
        .. (traceback and ('\n' .. traceback) or ''))
    end
    local names = {}
    for k in next, p do
      -- New names and names the prelude reassigned (tools, pairs, ...) both count as its globals.
      if type(k) == 'string' and not rawequal(before[k], p[k]) then names[#names + 1] = k end
    end
    table_sort(names)
    for _, name in ipairs(names) do
      if reserved[name] then
        R.raise('lua', failure(pack, 'its prelude defines the global `' .. name .. '`, which is reserved as ' .. reserved[name]))
      end
      if owners[name] then
        R.raise('lua', failure(pack, 'its prelude defines the global `' .. name .. '`, which the prelude of Pack `' .. owners[name] .. '` already defines'))
      end
    end
    for _, name in ipairs(names) do
      owners[name] = pack
      local value = p[name]
      env[name] = type(value) == 'table' and seal(name, pack, value) or value
    end
  end
end
end
