-- The Lua sandbox a section's code runs in: the standard library without io, os, debug,
-- package, file loading or bytecode; `pairs` in a fixed order; coroutines that pass the
-- Engine's effects through; `math.random` seeded from the run seed.
local R = ...
local raw = R.raw
local type, next, rawget, rawlen, select, error, pcall = type, next, rawget, rawlen, select, error, pcall
local table_sort, table_pack, table_unpack = table.sort, table.pack, table.unpack
local math_type = math.type

local M = {}

-- Deterministic pairs -------------------------------------------------------------------
-- Lua seeds string hashing per state, so next() order differs between two VMs and between
-- a run and its replay. pairs() therefore walks keys in a fixed order: the list part
-- 1..n first, then numbers, strings and booleans sorted, then other keys as next() finds them.
local rank = { number = 1, string = 2, boolean = 3 }
local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return (rank[ta] or 4) < (rank[tb] or 4) end
  if ta == 'number' or ta == 'string' then return a < b end
  if ta == 'boolean' then return (not a) and b end
  return false
end

local function ordered_keys(t)
  local n = rawlen(t)
  local keys, others, count = {}, {}, 0
  for k in next, t do
    count = count + 1
    if not (math_type(k) == 'integer' and k >= 1 and k <= n) then
      if rank[type(k)] then keys[#keys + 1] = k else others[#others + 1] = k end
    end
  end
  if count == n then return nil, n end
  table_sort(keys, key_less)
  local ordered = {}
  for i = 1, n do ordered[i] = i end
  for i = 1, #keys do ordered[#ordered + 1] = keys[i] end
  for i = 1, #others do ordered[#ordered + 1] = others[i] end
  return ordered, n
end

local raw_getmetatable = raw.getmetatable_any
function M.pairs(t)
  -- The raw metatable: sealed and var tables lock theirs with __metatable but keep __pairs.
  local mt = raw_getmetatable(t)
  if type(mt) == 'table' and mt.__pairs then
    local f, s, c = mt.__pairs(t)
    return f, s, c
  end
  if type(t) ~= 'table' then
    error("bad argument #1 to 'for iterator' (table expected, got " .. R.typename(t) .. ')', 2)
  end
  local ordered, n = ordered_keys(t)
  local i = 0
  if not ordered then
    return function()
      i = i + 1
      while i <= n do
        local v = rawget(t, i)
        if v ~= nil then return i, v end
        i = i + 1
      end
    end, t, nil
  end
  return function()
    while true do
      i = i + 1
      local k = ordered[i]
      if k == nil then return nil end
      local v = rawget(t, k)
      if v ~= nil then return k, v end
    end
  end, t, nil
end

-- Coroutines that pass effects through ----------------------------------------------------
-- A user coroutine that reaches an effect yields the Engine's MARK; resume passes that
-- yield up to the section's own thread and feeds the answer back down, so a tools.call
-- inside coroutine.wrap works like one outside it.
-- A coroutine the count hook paused yields no values and leaves a mark in the VM (the
-- paused leaf); resume passes that pause up too, where the thread can yield, so a loop
-- inside a coroutine lets other chains run like one outside it.
local MARK, STOP = R.MARK, R.STOP
local rawequal = rawequal
local paused = R.leaves.paused
local function pass_through(co, ...)
  local results = table_pack(raw.resume(co, ...))
  while results[1] and raw.status(co) == 'suspended' do
    if results[2] == MARK then
      results = table_pack(raw.resume(co, raw.yield(table_unpack(results, 2, results.n))))
    elseif results.n == 1 and paused() then
      if raw.isyieldable() then raw.yield(MARK, R.protocol.encode_pause()) end
      results = table_pack(raw.resume(co))
    else
      break
    end
  end
  -- The budget's stop ends the resumer too, at once: it is never a value section code holds.
  if not results[1] and rawequal(results[2], STOP) then error(STOP, 0) end
  return results
end

function M.coroutine(main_thread)
  local c = {}
  c.create = function(f)
    if type(f) ~= 'function' then error("bad argument #1 to 'create' (function expected)", 2) end
    local co = raw.create(f)
    R.watch(co)
    return co
  end
  c.resume = function(co, ...)
    local results = pass_through(co, ...)
    return table_unpack(results, 1, results.n)
  end
  c.wrap = function(f)
    local co = c.create(f)
    return function(...)
      local results = pass_through(co, ...)
      if not results[1] then error(results[2], 0) end
      return table_unpack(results, 2, results.n)
    end
  end
  c.yield = function(...)
    if raw.running() == main_thread() then
      error('attempt to yield from outside a coroutine', 2)
    end
    return raw.yield(...)
  end
  c.status = raw.status
  c.running = raw.running
  c.isyieldable = function() return raw.running() ~= main_thread() and raw.isyieldable() end
  -- A coroutine the stop ended keeps its hooks off (Lua restores them only for a pcall), so
  -- closing it would run its __close handlers unmetered: once stopping, close raises the stop.
  c.close = function(co)
    if R.stopping() then error(STOP, 0) end
    return raw.close(co)
  end
  return c
end

-- The environment -------------------------------------------------------------------------

local function copy(t)
  local c = {}
  for k, v in next, t do c[k] = v end
  return c
end

local base_names = { 'assert', 'error', 'getmetatable', 'ipairs', 'next', 'pcall', 'rawequal',
  'rawget', 'rawlen', 'rawset', 'select', 'setmetatable', 'tonumber', 'tostring', 'type',
  'xpcall', '_VERSION' }
M.base_names = base_names

-- Locks the string metatable so section code cannot change how strings behave for the runtime.
local string_mt = getmetatable('')
string_mt.__metatable = 'string'

-- The budget's stop is raised from the count hook, where Lua runs an xpcall message handler
-- with hooks off: the handler never sees the stop (nor any error once the run is stopping).
local raw_xpcall, stopping = xpcall, R.stopping
local function sandbox_xpcall(...)
  local f, handler = ...
  if type(handler) ~= 'function' then
    -- xpcall's own message (a tail call to it would lose its name).
    local got = select('#', ...) < 2 and 'no value' or handler == R.null and 'light userdata' or type(handler)
    error("bad argument #2 to 'xpcall' (function expected, got " .. got .. ')', 2)
  end
  return raw_xpcall(f, function(e)
    if rawequal(e, STOP) or stopping() then return e end
    return handler(e)
  end, select(3, ...))
end

local seed_hi, seed_lo = 0, 0

--- Seeds math.random with the entry's seed (two integers), as math.randomseed() will again.
function M.seed(hi, lo)
  seed_hi, seed_lo = hi, lo
  math.randomseed(hi, lo)
end

--- A fresh sandbox environment.
function M.new_env(main_thread, log)
  local env = {}
  for _, name in ipairs(base_names) do env[name] = _G[name] end
  env.pairs = M.pairs
  env.xpcall = sandbox_xpcall
  env.print = log
  env.string = copy(string)
  env.string.dump = nil
  -- The library's own table too (package.loaded's), so Lua names them in its messages
  -- ('string.find') as it names the C ones; modules loaded after this capture these.
  for name, f in next, R.patterns do env.string[name], string[name] = f, f end
  -- Methods on strings ('s:find(p)') index a private copy of that library, which section code
  -- cannot reach or change (the metatable is locked), so the runtime's own method calls stay
  -- its own; functions section code adds to string are found after it.
  local methods = copy(env.string)
  string_mt.__index = setmetatable(methods, { __index = env.string })
  env.table = copy(table)
  env.table.move, table.move = R.table_move, R.table_move
  env.utf8 = copy(utf8)
  env.math = copy(math)
  env.math.randomseed = function(a, b)
    -- With no argument Lua would seed from the clock; a run seeds from its own seed instead.
    if a == nil then return math.randomseed(seed_hi, seed_lo) end
    return math.randomseed(a, b)
  end
  env.coroutine = M.coroutine(main_thread)
  env.load = function(chunk, name, mode, chunk_env)
    if mode ~= nil and mode ~= 't' then
      return nil, 'load: only text chunks can be loaded (binary chunks are refused)'
    end
    if type(chunk) == 'function' then
      return nil, 'load: only strings can be loaded'
    end
    return raw.load(chunk, name, 't', chunk_env == nil and env or chunk_env)
  end
  env._G = env
  return env
end

return M
