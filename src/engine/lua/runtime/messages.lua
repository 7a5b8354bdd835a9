-- The entry's conversation: the `messages` global, a tracked list of read-only records, and
-- what changed in it since the last model round (models.lua sends only that).
return function(R, env)
local json = R.json
local type, ipairs, tostring = type, ipairs, tostring
local quote = json.encode_string
local set_own_metatable = R.raw.set_own_metatable

-- messages -----------------------------------------------------------------------------------
-- The conversation is a tracked list of read-only records. The driver keeps the records it
-- was sent, so each round sends only what changed since the last one: a long loop would
-- otherwise re-send (and re-hash on replay) its whole conversation every round.

local record_data = setmetatable({}, { __mode = 'k' })
-- A record's JSON form, made when it was added: json.encode writes it as it is.
local record_text = json.texts
local RecordMT = {
  __index = function(r, k) return record_data[r][k] end,
  __newindex = function(_, k)
    R.raise('lua', 'message records are read-only: cannot assign field ' .. quote(tostring(k)) .. '; append a new record instead')
  end,
  __pairs = function(r) return R.sealed_pairs(record_data[r]) end,
  __metatable = 'message record',
  [R.SEALED] = 'a message record',
}

--- A record as the conversation keeps it: its fields copied, its JSON text made once.
local function as_record(v, index)
  if type(v) == 'table' and record_data[v] then return v end
  if type(v) ~= 'table' then
    R.raise('lua', 'messages holds records such as { role = "user", content = "..." }; messages[' .. index .. '] got ' .. R.typename(v))
  end
  local role, content = rawget(v, 'role'), rawget(v, 'content')
  if role ~= 'user' and role ~= 'system' and role ~= 'assistant' and role ~= 'tool' then
    R.raise('lua', 'messages[' .. index .. '].role must be "user", "system", "assistant" or "tool", got ' .. (type(role) == 'string' and quote(role) or R.typename(role)))
  end
  if content ~= nil and type(content) ~= 'string' then
    R.raise('lua', 'messages[' .. index .. '].content must be text, got ' .. R.typename(content))
  end
  local data = { role = role, content = content or '', tool_calls = rawget(v, 'tool_calls'), tool_call_id = rawget(v, 'tool_call_id') }
  local text, err = json.try_encode(data, 'messages[' .. index .. ']')
  if not text then R.raise('lua', 'messages[' .. index .. '] cannot be sent to a model: ' .. err) end
  local record = set_own_metatable({}, RecordMT)
  record_data[record] = data
  record_text[record] = text
  return record
end

local items = {}
local sent = 0     -- records the driver holds for this entry's conversation
local dirty = 1    -- the lowest position changed since the last round was sent
-- Where the records of the last fused round start while they end the conversation as the
-- loop appended them: the driver made their texts, so the next round names them rather
-- than sending them back. nil once anything else changes.
local made_from = nil
local methods = {}
local messages = R.namespaces.messages
setmetatable(messages, {
  __index = function(_, k)
    local method = methods[k]
    if method then return method end
    return items[k]
  end,
  __newindex = function(_, k, v)
    if math.type(k) ~= 'integer' or k < 1 then
      R.raise('lua', 'messages holds records at list positions 1, 2, ...; got a ' .. R.typename(k) .. ' key')
    end
    items[k] = v ~= nil and as_record(v, k) or nil
    if k < dirty then dirty = k end
    made_from = nil
  end,
  __len = function() return #items end,
  -- Never the items list itself: a record enters the conversation only through __newindex.
  __pairs = function() return R.sealed_pairs(items) end,
  __metatable = 'messages',
  [R.SEALED] = 'messages',
})
for _, role in ipairs({ 'user', 'system', 'assistant' }) do
  methods[role] = function(self, text)
    if type(text) == 'number' then text = R.scalar_text(text) end
    if type(text) ~= 'string' then R.raise('lua', 'messages:' .. role .. ' takes text, got ' .. R.typename(text)) end
    self[#self + 1] = { role = role, content = text }
  end
end

-- A call's arguments table, decoded from its JSON text only if the prompt reads it.
local call_arguments = setmetatable({}, { __mode = 'k' })
local CallMT = {
  __metatable = 'tool call',
  __index = function(call, k)
    if k ~= 'arguments' then return nil end
    local value = json.decode(call_arguments[call])
    rawset(call, 'arguments', value)
    return value
  end,
}

--- Appends a record whose JSON text the driver already made (a loop round's records).
local function push_record(data, text)
  local record = set_own_metatable({}, RecordMT)
  record_data[record] = data
  record_text[record] = text
  local k = #items + 1
  items[k] = record
  if k < dirty then dirty = k end
end

--- What changed in the conversation since the last round: the first position to replace,
--- the JSON text of every record from there on, in a list reused by every round (it is
--- unpacked at once), their count, and whether they are the last fused round's records.
local changed_texts, changed_count = {}, 0
local function conversation_changes()
  local from = math.min(dirty, sent + 1)
  if from == made_from then
    -- The driver's own records of the last round, and nothing else: it keeps their texts,
    -- so the round names them (fused_records) rather than sending them back.
    local n = #items - from + 1
    sent, dirty, made_from = #items, #items + 1, nil
    return from, changed_texts, n, true
  end
  local texts, n = changed_texts, 0
  for i = from, #items do
    n = n + 1
    texts[n] = record_text[items[i]]
  end
  for i = n + 1, changed_count do texts[i] = nil end
  changed_count = n
  sent, dirty = #items, #items + 1
  return from, texts, n, false
end


-- What models.lua reads and changes of the conversation --------------------------------------
R.conversation = {
  as_record = as_record,
  push = push_record,
  changes = conversation_changes,
  CallMT = CallMT,
  call_arguments = call_arguments,
}

--- The records as a plain list (a compactor's input).
function R.conversation.records()
  local records = {}
  for i = 1, #items do records[i] = items[i] end
  return records
end

--- Replaces every record with `kept` (records already), all to be sent again.
function R.conversation.replace(kept)
  for i = #items, 1, -1 do items[i] = nil end
  for i, r in ipairs(kept) do items[i] = r end
  dirty, made_from = 1, nil
end

--- Notes where the records of a fused round start (nil: the last round was not fused).
function R.conversation.fused_from(first)
  made_from = first
end
end
