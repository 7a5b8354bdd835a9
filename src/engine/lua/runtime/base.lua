-- The runtime's private core: captured primitives, error values, the effect protocol and
-- the instruction-budget hook. Every other runtime module receives its table `R`.
--
-- The Engine drives each section VM's main coroutine by hand: an effect is a plain
-- `coroutine.yield(MARK, 'effect', op, payload)` that the JS driver answers with
-- `ok, value` or `false, kind, message`. No JS function ever calls back into Lua, so no
-- await has to cross a C boundary.
local P = ...
local R = {}
local leaves = {}
R.protocol = P

-- No object in a section VM ever gets a finalizer: Lua runs __gc with the count hook off, so a
-- loop in one would never be counted, paused or cancelled. Lua marks an object for
-- finalization only when its metatable holds __gc as it is set, so every way to set one that
-- code can reach refuses such a metatable. The runtime sets its own metatables (constants it
-- defines, none with __gc) on every record, call and Tool object it makes, unchecked:
-- R.raw.set_own_metatable and set_own_metatable_any, never given a metatable from outside.
local raw_setmetatable, raw_debug_setmetatable, raw_get, raw_type, raw_error = setmetatable, debug.setmetatable, rawget, type, error
R.GC_REFUSED = "setmetatable: a metatable with a __gc field cannot be set (a finalizer would run outside the run's instruction budget)"
function setmetatable(t, mt)
  if raw_type(mt) == 'table' and raw_get(mt, '__gc') ~= nil then raw_error(R.GC_REFUSED, 2) end
  return raw_setmetatable(t, mt)
end
local function setmetatable_any(v, mt)
  if raw_type(mt) == 'table' and raw_get(mt, '__gc') ~= nil then raw_error(R.GC_REFUSED, 2) end
  return raw_debug_setmetatable(v, mt)
end

-- The metered pattern functions (pattern-natives.ts): the sandbox's string library and the
-- string methods use them; the runtime keeps the C ones for its own fixed patterns.
R.patterns = { find = __rv_str_find, match = __rv_str_match, gmatch = __rv_str_gmatch, gsub = __rv_str_gsub, rep = __rv_str_rep }
-- table.move checks and charges its range before the C one moves it.
R.table_move = __rv_str_move
__rv_str_find, __rv_str_match, __rv_str_gmatch, __rv_str_gsub, __rv_str_rep, __rv_str_move = nil, nil, nil, nil, nil, nil
-- Each leaf is a C function of its own that calls its JS method (entry/driver.ts defines them
-- in the template as __rv_leaf_<name>; entry/leaves.ts binds one object's methods per VM).
for k, v in next, _G do
  if type(k) == 'string' and k:sub(1, 10) == '__rv_leaf_' then
    leaves[k:sub(11)] = v
    _G[k] = nil
  end
end
leaves.newuserdata = __rv_newuserdata
__rv_newuserdata = nil
R.leaves = leaves
R.null = __rv_null
__rv_null = nil

R.raw = {
  yield = coroutine.yield, resume = coroutine.resume, create = coroutine.create,
  status = coroutine.status, running = coroutine.running, wrap = coroutine.wrap,
  isyieldable = coroutine.isyieldable, close = coroutine.close,
  load = load, traceback = debug.traceback,
  setmetatable_any = setmetatable_any, getmetatable_any = debug.getmetatable,
  set_own_metatable = raw_setmetatable, set_own_metatable_any = raw_debug_setmetatable,
  getinfo = debug.getinfo,
}
R.MARK = setmetatable({}, { __name = 'runvil.mark', __metatable = 'runvil.mark' })
-- The entry's model rounds so far (sys.round, and the turn of every event).
R.round = 0

local string_format, select, type, tostring = string.format, select, type, tostring
local math_type = math.type

--- The Lua type name the chapter's messages use: integer and float apart from number.
function R.typename(v)
  local t = type(v)
  if t == 'number' then return math_type(v) == 'integer' and 'integer' or 'number' end
  if t == 'userdata' and v == R.null then return 'userdata' end
  return t
end

-- Error values --------------------------------------------------------------------------

local ErrorMT = {
  __name = 'runvil.error',
  -- Locked: every error value shares it, and what section code could add would reach them all.
  __metatable = 'runvil.error',
  __tostring = function(e) return e.message end,
}

-- The kind of every error value the runtime made, by the value: a table Lua code built
-- (or copied, or gave this metatable) is not in it, whatever its kind field says, and a
-- kind field changed afterwards changes nothing. Weak, so caught errors are collected.
local made_errors = setmetatable({}, { __mode = 'k' })

--- A new error value {kind, message, ...fields}; tostring gives the message.
function R.new_error(kind, message, fields)
  local e = { kind = kind, message = message }
  if fields then for k, v in pairs(fields) do e[k] = v end end
  made_errors[e] = kind
  return setmetatable(e, ErrorMT)
end

--- Raises an error value. Level 0: the Engine's messages carry no chunk:line prefix.
function R.raise(kind, message, fields)
  error(R.new_error(kind, message, fields), 0)
end

local rawget, pcall = rawget, pcall
local getmetatable_any = debug.getmetatable

--- The message of a raised table: its message field, else what its __tostring gives.
local function table_message(err)
  local message = rawget(err, 'message')
  if type(message) == 'string' then return message end
  local mt = getmetatable_any(err)
  if type(mt) == 'table' and rawget(mt, '__tostring') ~= nil then
    local ok, text = pcall(tostring, err)
    if ok and type(text) == 'string' then return text end
  end
  local kind = rawget(err, 'kind')
  if type(kind) == 'string' then
    if #kind > 60 then kind = kind:sub(1, 60) .. '...' end
    return 'a table was raised as an error (kind ' .. kind .. ')'
  end
  return 'a table was raised as an error'
end

--- The kind and message of any raised value, as the run reports it. Only the runtime's own
--- error values keep their kind; anything else Lua raised is kind lua.
function R.describe_error(err)
  local t = type(err)
  if t == 'string' then return 'lua', err end
  if t == 'table' then return made_errors[err] or 'lua', table_message(err) end
  return 'lua', 'a ' .. R.typename(err) .. ' value was raised as an error'
end

-- The count hook ------------------------------------------------------------------------
-- A C hook the platform installs (lua/platform.ts) counts instructions against the run's budget
-- every 10,000 of them, stops a thread whose chain must stop by raising STOP at that and
-- every later instruction (no pcall can keep it alive), and pauses a thread that ran long
-- so other chains get their turn.

R.STOP = setmetatable({}, { __name = 'runvil.stop', __metatable = 'runvil.stop', __tostring = function() return 'the run is stopping' end })
-- A real global, which the section's sandboxed code never sees: the C hook raises it.
__rv_stop = R.STOP
local tick = leaves.tick
local watch = __rv_watch
__rv_watch = nil
--- True once the entry's chain is stopping (the run cancelled or out of budget, or the task cancelled).
function R.stopping()
  return tick(0)
end

--- Puts the count hook on a coroutine (hooks are per thread in Lua).
function R.watch(co)
  watch(co)
end

-- Effects -------------------------------------------------------------------------------

local raw_yield = R.raw.yield
--- Performs an effect through the Harness; returns its answer text or raises its error.
--- The leaf leaves.answered answers at once, with no yield, what needs no waiting (a replay's
--- every effect: thousands of them). Otherwise it keeps the values it was given and answers
--- false; the thread then yields the mark 'kept' alone, and the driver takes the values it
--- kept. Either way the values cross into JS once. The answer is `true, text` or a failure,
--- `false, kind, message` (protocol.lua).
function R.effect(op, payload)
  if R.loading_prelude and op:sub(1, 6) ~= 'store.' then
    R.raise('lua', 'tools.call cannot run while a prelude loads')
  end
  local now, ok, a, b = leaves.answered(P.encode_effect(op, payload))
  if not now then ok, a, b = raw_yield(R.MARK, P.encode_kept()) end
  if ok then return a end
  R.raise(a, b)
end

--- Sends the values of an effect with a long answer (a model round's, a batch's, as
--- protocol.lua encodes them); returns the answer packed, and the position just before its
--- first value after the leading true (the packed list is the one the answer came in: no copy).
--- Raises a failure's error.
local function answered_packed(...)
  local answer, at = table.pack(leaves.answered(...)), 1
  if not answer[1] then answer, at = table.pack(raw_yield(R.MARK, P.encode_kept())), 0 end
  if answer[at + 1] then return answer, at + 1 end
  R.raise(P.failure(answer, at))
end

--- Performs a model round (protocol.lua's encode_round values); returns the reply (decode_reply).
function R.model_effect(...)
  return P.decode_reply(answered_packed(...))
end

--- Calls catalog tools at once (a tool-call batch): each call is {tool, name, args_json,
--- caller, call_id, turn}. Answers, in call order, {ok, text, record}: the text the caller
--- sees, and a model call's tool record; the driver wraps untrusted output and reports a
--- model call's events. Plain values cross both ways, no JSON: this runs on every tool round.
function R.batch(calls)
  if R.loading_prelude then R.raise('lua', 'tools.call cannot run while a prelude loads') end
  -- The answer comes after the leaf's leading true, or alone from the 'kept' yield.
  local answers, at = table.pack(leaves.answered(P.encode_batch(calls))), 1
  if not answers[1] then answers, at = table.pack(raw_yield(R.MARK, P.encode_kept())), 0 end
  return P.decode_batch_answers(answers, at, #calls)
end

--- Asks the driver for an Engine operation (protocol.lua's encode_call, encode_await,
--- encode_fanout, encode_jump); returns whatever it answers.
function R.request(...)
  return raw_yield(R.MARK, ...)
end

--- Records a run event with a JSON object of fields.
function R.event(event_type, fields, turn)
  turn = turn or R.round or 0
  fields = fields or {}
  -- Plain fields cross as (name, value) pairs; anything else as JSON (protocol.lua's event_pairs).
  local flat, n = P.event_pairs(fields)
  if flat then return leaves.event_fields(event_type, turn, table.unpack(flat, 1, n)) end
  local text = R.json.try_encode(fields) or '{}'
  leaves.event(event_type, text, turn)
end

--- Records a run event whose fields the caller wrote as a JSON object text.
function R.event_json(event_type, text, turn)
  leaves.event(event_type, text, turn or R.round or 0)
end

--- Text of a value by the scalar return rule; raises for a value with no text form.
function R.scalar_text(v)
  local t = type(v)
  if t == 'string' then return v end
  if t == 'number' then
    if math_type(v) == 'integer' then return string_format('%d', v) end
    return tostring(v)
  end
  if t == 'boolean' then return tostring(v) end
  R.raise('lua', 'cannot return a ' .. R.typename(v) .. ' as a result')
end

return R
