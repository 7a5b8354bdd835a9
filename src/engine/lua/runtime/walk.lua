-- The section walk as Lua sees it: jump, call, require, the prose global, and the entry
-- runner that executes a section's blocks in order under the scalar return rule.
local R = ...
local L = R.leaves
local raw = R.raw
local json = R.json
local type, select, string_rep, string_find, string_sub = type, select, string.rep, string.find, string.sub
local table_pack, table_unpack, table_concat = table.pack, table.unpack, table.concat

local M = {}

local function heading_arg(fname, ref)
  if type(ref) ~= 'string' then
    R.raise('lua', fname .. " takes a heading reference such as '## Next', got " .. R.typename(ref))
  end
  local name, problem = L.find_section(ref)
  if not name then R.raise('lua', fname .. ': ' .. problem) end
  return name
end
M.heading_arg = heading_arg

-- Where the walk cannot move from, what jump says.
local NO_JUMP = {
  call = 'jump is unavailable in a section entered with call: the walk cannot move from here; return a value instead',
  task = 'jump is unavailable in a task: a task runs its own section apart from the walk, so the walk cannot move from here; return a value, or call the section',
  arm = 'jump is unavailable in a fanout arm: an arm runs its own section apart from the walk, so the walk cannot move from here; return a value, or call the section',
}

-- A syntax error of a block, placed at its column: the leaf names the places its token may be
-- at, best first, each with the byte its cut text ends at; the one Lua stopped at is the first
-- whose cut text fails with the very same message (engine/lua/syntax-place.ts).
local function placed_syntax_error(text, chunkname, err, section, index)
  local found = table_pack(L.syntax_place(section, index, err))
  for i = 2, found.n - 1, 2 do
    local _, cut_err = raw.load(string_sub(text, 1, found[i]), '=' .. chunkname, 't')
    if cut_err == err then return found[i + 1] end
  end
  return found[1]
end

--- Loads one block of a section as a function in env; line numbers match the prompt file.
function M.load_block(section, index, env)
  local source, line, chunkname = L.block(section, index)
  local text = string_rep('\n', line - 1) .. source
  local fn, err = raw.load(text, '=' .. chunkname, 't', env)
  if not fn then R.raise('lua', placed_syntax_error(text, chunkname, err, section, index)) end
  return fn
end

function M.install(env, entry)
  env.jump = function(ref)
    if R.handler_depth > 0 then
      R.raise('lua', 'jump is unavailable inside a local tool handler: return a value from the handler and call jump from the block after the tool call returns')
    end
    local name = heading_arg('jump', ref)
    if NO_JUMP[entry.kind] then R.raise('lua', NO_JUMP[entry.kind]) end
    R.request(R.protocol.encode_jump(name))
    error('unreachable: the Engine does not resume a jump', 0)
  end

  env.call = function(ref, ...)
    local name = heading_arg('call', ref)
    local n = select('#', ...)
    local packed = {}
    json.arrays[packed] = true
    for i = 1, n do
      local v = select(i, ...)
      if v == nil then v = R.null end
      packed[i] = v
    end
    local text, err = json.try_encode(packed, 'call argument')
    if not text then R.raise('lua', 'call arguments must have a JSON form: ' .. err) end
    local ok, a, b = R.request(R.protocol.encode_call(name, text))
    if not ok then R.raise(a, b) end
    return a
  end

  local required, LOADING, NOTHING = {}, {}, {}
  env.require = function(ref)
    local name = heading_arg('require', ref)
    local cached = required[name]
    if cached == LOADING then R.raise('lua', 'require: "## ' .. name .. '" requires itself while it loads') end
    if cached == NOTHING then return nil end
    if cached ~= nil then return cached end
    required[name] = LOADING
    local count = L.block(name, 0)
    local value = nil
    for i = 1, count do
      value = M.load_block(name, i, env)()
      if value ~= nil then break end
    end
    required[name] = value == nil and NOTHING or value
    return value
  end
end

--- Evaluates every {{ expression }} in prose; a loop rather than gsub, so an expression
--- may suspend on an effect.
function M.interpolate(prose, env)
  local out, pos = {}, 1
  while true do
    local s, e = string_find(prose, '{{', pos, true)
    if not s then break end
    local close = string_find(prose, '}}', e + 1, true)
    if not close then break end
    out[#out + 1] = string_sub(prose, pos, s - 1)
    local expression = string_sub(prose, e + 1, close - 1)
    local fn, err = raw.load('return ' .. expression, '=prose', 't', env)
    if not fn then R.raise('lua', 'in the prose expression {{' .. expression .. '}}: ' .. err) end
    local value = fn()
    if value ~= nil then out[#out + 1] = R.scalar_text(value) end
    pos = close + 2
  end
  out[#out + 1] = string_sub(prose, pos)
  return table_concat(out)
end

--- Runs the current entry's blocks; returns its end: protocol.lua's end_return(text) or end_fall().
function M.run_entry(env, entry)
  local args = entry.args
  local function run_block(i)
    local results = table_pack(M.load_block(nil, i, env)(table_unpack(args, 1, args.n)))
    return results[1]
  end
  for i = 1, entry.prologue do
    local v = run_block(i)
    if v ~= nil then return R.protocol.end_return(R.scalar_text(v)) end
  end
  if entry.has_prose then
    env.prose = M.interpolate(L.prose(), env)
    if entry.epilogue == 0 then
      R.model_step(env)
      return R.protocol.end_fall()
    end
  end
  for i = entry.prologue + 1, entry.prologue + entry.epilogue do
    local v = run_block(i)
    if v ~= nil then return R.protocol.end_return(R.scalar_text(v)) end
  end
  return R.protocol.end_fall()
end

return M
