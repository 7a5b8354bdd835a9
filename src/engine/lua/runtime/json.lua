-- The Lua side of `json`: encode, decode, json.null and json.array().
--
-- Written in Lua rather than converted through wasmoon because the conversion has to keep
-- what JSON keeps and Lua does not say by itself: integers versus floats, null versus
-- absent, an empty array versus an empty object, and key order (sorted, so the text of a
-- value is the same on every run and every replay).
local M = {}
local R = ...  -- the runtime's private table: R.null (light userdata), R.raise

local type, next, tostring, select = type, next, tostring, select
local string_format, string_byte, string_find, string_sub, string_gsub =
  string.format, string.byte, string.find, string.sub, string.gsub
local table_concat, table_sort = table.concat, table.sort
local math_type, math_huge, math_tointeger, math_floor = math.type, math.huge, math.tointeger, math.floor
local utf8_char = utf8.char
local rawget, rawlen, getmetatable = rawget, rawlen, getmetatable

local arrays = setmetatable({}, { __mode = 'k' })  -- tables marked with json.array()
M.arrays = arrays
M.views = setmetatable({}, { __mode = 'k' })       -- var views: table -> function(table) returning JSON text
M.texts = setmetatable({}, { __mode = 'k' })       -- message records: table -> its JSON text, made once

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function escape_char(c)
  return escapes[c] or string_format('\\u%04x', string_byte(c))
end
local function encode_string(s)
  -- Most strings need no escape; finding none is cheaper than a gsub that replaces nothing.
  if not string_find(s, '[%c"\\]') then return '"' .. s .. '"' end
  return '"' .. string_gsub(s, '[%c"\\]', escape_char) .. '"'
end
M.encode_string = encode_string

local function encode_number(n)
  if math_type(n) == 'integer' then return string_format('%d', n) end
  if n ~= n or n == math_huge or n == -math_huge then return nil, 'a number that is NaN or infinite' end
  local i = math_tointeger(n)
  if i and n == math_floor(n) and n > -2^53 and n < 2^53 then return string_format('%d', i) end
  local text = string_format('%.14g', n)
  if tonumber(text) ~= n then text = string_format('%.17g', n) end
  return text
end

local function path_text(path)
  if path == '' then return 'the value' end
  return path or ''
end

local encode_value

-- Sorted keys of a table that must become a JSON object or array.
local function table_shape(t)
  local n = rawlen(t)
  local count, strings = 0, {}
  for k in next, t do
    count = count + 1
    local kt = type(k)
    if kt == 'string' then
      strings[#strings + 1] = k
    elseif not (math_type(k) == 'integer' and k >= 1 and k <= n) then
      return nil, nil, kt
    end
  end
  return n, strings, nil, count
end

-- path is where v sits, for the error message; nil on the first pass, which tracks no paths
-- (a failed first pass is run again with them, so only a failure pays for its message).
encode_value = function(v, path, seen, out)
  local t = type(v)
  if t == 'string' then out[#out + 1] = encode_string(v); return true end
  if t == 'number' then
    local text, why = encode_number(v)
    if not text then return false, path_text(path) .. ' is ' .. why end
    out[#out + 1] = text
    return true
  end
  if t == 'boolean' then out[#out + 1] = v and 'true' or 'false'; return true end
  if t == 'nil' or v == R.null then out[#out + 1] = 'null'; return true end
  if t ~= 'table' then return false, path_text(path) .. ' is a ' .. t .. ', which has no JSON form' end
  local text = M.texts[v]
  if text then out[#out + 1] = text; return true end
  local view = M.views[v]
  if view then out[#out + 1] = view(v); return true end
  if seen[v] then return false, path_text(path) .. ' contains itself' end
  seen[v] = true
  local n, strings, badtype, count = table_shape(v)
  if not n then
    seen[v] = nil
    return false, path_text(path) .. ' has a ' .. badtype .. ' key, which has no JSON form'
  end
  if #strings > 0 and n > 0 then
    seen[v] = nil
    return false, path_text(path) .. ' mixes list items and named fields'
  end
  if #strings == 0 and n > 0 and count ~= n then
    seen[v] = nil
    return false, path_text(path) .. ' is a list with holes'
  end
  if #strings == 0 and (n > 0 or arrays[v]) then
    out[#out + 1] = '['
    for i = 1, n do
      if i > 1 then out[#out + 1] = ',' end
      local ok, err = encode_value(rawget(v, i), path and (path .. '[' .. i .. ']'), seen, out)
      if not ok then seen[v] = nil; return false, err end
    end
    out[#out + 1] = ']'
  else
    table_sort(strings)
    out[#out + 1] = '{'
    for i, k in ipairs(strings) do
      if i > 1 then out[#out + 1] = ',' end
      out[#out + 1] = encode_string(k)
      out[#out + 1] = ':'
      local sub = path and (string_find(k, '^[%a_][%w_]*$') and (path .. '.' .. k) or (path .. '[' .. encode_string(k) .. ']'))
      local ok, err = encode_value(rawget(v, k), sub, seen, out)
      if not ok then seen[v] = nil; return false, err end
    end
    out[#out + 1] = '}'
  end
  seen[v] = nil
  return true
end

--- Encodes v; returns the text, or nil and a detail naming where it failed (path starts at root).
function M.try_encode(v, root)
  local out = {}
  if encode_value(v, nil, {}, out) then return table_concat(out) end
  local _, err = encode_value(v, root or '', {}, {})
  return nil, err
end

-- Decoding ---------------------------------------------------------------------------

local decode_value

local function decode_error(text, pos, what)
  R.raise('lua', string_format('json.decode: %s at position %d', what, pos))
end

local function skip(text, pos)
  -- Compact JSON (every text the Engine makes) has nothing to skip: a byte test is enough.
  local b = string_byte(text, pos)
  if b ~= 32 and b ~= 9 and b ~= 10 and b ~= 13 then return pos end
  local _, e = string_find(text, '^[ \t\r\n]*', pos)
  return e + 1
end

local function codepoint_to_utf8(cp)
  return utf8_char(cp)
end

local function decode_string(text, pos)
  -- pos points at the opening quote. Most strings have no escape: one find reaches the end.
  local close = string_find(text, '["\\%c]', pos + 1)
  if close and string_byte(text, close) == 34 then return string_sub(text, pos + 1, close - 1), close + 1 end
  local parts, i = {}, pos + 1
  while true do
    local s, e = string_find(text, '["\\%c]', i)
    if not s then decode_error(text, pos, 'unterminated string') end
    if s > i then parts[#parts + 1] = string_sub(text, i, s - 1) end
    local c = string_sub(text, s, s)
    if c == '"' then return table_concat(parts), s + 1 end
    if c ~= '\\' then decode_error(text, s, 'control character in string') end
    local esc = string_sub(text, s + 1, s + 1)
    if esc == 'u' then
      local hex = string_sub(text, s + 2, s + 5)
      if not string_find(hex, '^%x%x%x%x$') then decode_error(text, s, 'bad \\u escape') end
      local cp = tonumber(hex, 16)
      local nexti = s + 6
      if cp >= 0xD800 and cp <= 0xDBFF and string_sub(text, nexti, nexti + 1) == '\\u' then
        local low = tonumber(string_sub(text, nexti + 2, nexti + 5), 16)
        if low and low >= 0xDC00 and low <= 0xDFFF then
          cp = 0x10000 + (cp - 0xD800) * 0x400 + (low - 0xDC00)
          nexti = nexti + 6
        end
      end
      parts[#parts + 1] = codepoint_to_utf8(cp)
      i = nexti
    else
      local map = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }
      local out = map[esc]
      if not out then decode_error(text, s, 'bad escape') end
      parts[#parts + 1] = out
      i = s + 2
    end
  end
end

local function decode_number(text, pos)
  local s, e = string_find(text, '^-?%d+%.?%d*[eE]?[-+]?%d*', pos)
  if not s then decode_error(text, pos, 'unexpected character') end
  local literal = string_sub(text, s, e)
  local n
  if string_find(literal, '^-?%d+$') then n = math_tointeger(tonumber(literal)) end
  if n == nil then n = tonumber(literal) end
  if n == nil then decode_error(text, pos, 'bad number') end
  return n, e + 1
end

decode_value = function(text, pos, depth)
  if depth > 200 then decode_error(text, pos, 'nesting too deep') end
  pos = skip(text, pos)
  -- Bytes: { 123, } 125, [ 91, ] 93, " 34, : 58, , 44, t 116, f 102, n 110.
  local b = string_byte(text, pos)
  if b == 123 then
    local obj = {}
    pos = skip(text, pos + 1)
    if string_byte(text, pos) == 125 then return obj, pos + 1 end
    while true do
      pos = skip(text, pos)
      if string_byte(text, pos) ~= 34 then decode_error(text, pos, 'expected a string key') end
      local key
      key, pos = decode_string(text, pos)
      pos = skip(text, pos)
      if string_byte(text, pos) ~= 58 then decode_error(text, pos, "expected ':'") end
      local value
      value, pos = decode_value(text, pos + 1, depth + 1)
      obj[key] = value
      pos = skip(text, pos)
      local d = string_byte(text, pos)
      if d == 125 then return obj, pos + 1 end
      if d ~= 44 then decode_error(text, pos, "expected ',' or '}'") end
      pos = pos + 1
    end
  elseif b == 91 then
    local arr = {}
    arrays[arr] = true
    pos = skip(text, pos + 1)
    if string_byte(text, pos) == 93 then return arr, pos + 1 end
    local n = 0
    while true do
      local value
      value, pos = decode_value(text, pos, depth + 1)
      n = n + 1
      arr[n] = value
      pos = skip(text, pos)
      local d = string_byte(text, pos)
      if d == 93 then return arr, pos + 1 end
      if d ~= 44 then decode_error(text, pos, "expected ',' or ']'") end
      pos = pos + 1
    end
  elseif b == 34 then
    return decode_string(text, pos)
  elseif b == 116 and string_sub(text, pos, pos + 3) == 'true' then return true, pos + 4
  elseif b == 102 and string_sub(text, pos, pos + 4) == 'false' then return false, pos + 5
  elseif b == 110 and string_sub(text, pos, pos + 3) == 'null' then return R.null, pos + 4
  elseif b == nil then decode_error(text, pos, 'unexpected end of text')
  end
  return decode_number(text, pos)
end

--- Decodes JSON text to Lua values (arrays marked, null as json.null); raises a lua-kind error.
function M.decode(text)
  if type(text) ~= 'string' then R.raise('lua', 'json.decode takes a string, got ' .. R.typename(text)) end
  local value, pos = decode_value(text, 1, 0)
  pos = skip(text, pos)
  if pos <= #text then decode_error(text, pos, 'unexpected text after the value') end
  return value
end

--- A deep copy of a decoded value, arrays marked as decoding the same text again would mark
--- them: several times cheaper than decoding it again.
function M.copy(v)
  if type(v) ~= 'table' then return v end
  local out = {}
  if arrays[v] then arrays[out] = true end
  for k, x in next, v do out[k] = M.copy(x) end
  return out
end

--- The public json table of the sandbox.
function M.public()
  return {
    null = R.null,
    encode = function(v)
      local text, err = M.try_encode(v)
      if not text then R.raise('lua', 'json.encode: ' .. err) end
      return text
    end,
    decode = M.decode,
    array = function(t)
      if t == nil then t = {} end
      if type(t) ~= 'table' then R.raise('lua', 'json.array takes a table or nothing, got ' .. R.typename(t)) end
      arrays[t] = true
      return t
    end,
  }
end

return M
