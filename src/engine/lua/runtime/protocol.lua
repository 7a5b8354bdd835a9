-- The protocol between the Lua runtime and the section driver: the layouts of the plain
-- values that cross between them, which this module alone knows on the Lua side (as
-- src/engine/entry/protocol.ts, protocol-leaves.ts and protocol-records.ts alone do on the
-- TypeScript side; test/engine/protocol*.test.ts run both and pin them together). Only scalars cross, in a fixed order: a table would
-- cost a JSON text or a walk on every crossing, and a tool round crosses several times. So
-- each layout is written and read here by name, and the rest of the runtime sees named fields.
--
-- - The entry: the leaf `entry` answers ENTRY_FIELDS in order (decode_entry).
-- - An effect: ('effect', op, payload JSON) (encode_effect); a model round: ('effect',
--   'model.round', ROUND_FIELDS..., then the changed records' texts) (encode_round); its
--   head (round_head), a one-off round's record (user_record), its tool list's entries
--   (tool_entry) and tool map (tool_map) as JSON texts.
-- - A tool-call batch: ('batch', n, then BATCH_CALL_FIELDS per call) (encode_batch).
-- - A round's answer: true, content, n calls, (id, name, arguments JSON) per call, then for a
--   loop round the assistant record's JSON, and for a fused round each call's batch answer
--   (decode_reply, reply_call, fused_result).
-- - A batch's answer: (ok, text, tool record JSON or nil) per call (decode_batch_answers).
-- - An Engine operation (R.request yields MARK, then these): a section call, an await of
--   tasks, a fanout, a jump, a pause passed up from a user coroutine (encode_call ...).
-- - The entry's end, as __rv_main returns it: 'return', text; 'fall'; 'error', kind,
--   message, traceback; 'stop' (end_return ...).
-- - Any failure: false, the error's Lua kind, its message.
--
-- And what the leaves answer and take (src/engine/entry/protocol-leaves.ts on the TypeScript
-- side; test/engine/protocol-leaves.test.ts):
-- - The catalog (the leaf `catalog` with no id): each list as its length, then its items'
--   fields in order (decode_catalog).
-- - A var read (the leaf `var_get`): a tag (VAR_TAGS), then the value for a scalar.
-- - An event's fields: (name, value) pairs when all are plain (event_pairs), else JSON text.
local select, table_unpack, type, next, math_huge = select, table.unpack, type, next, math.huge
local P = {}

-- The entry -------------------------------------------------------------------------------

--- The entry's facts, in the order the leaf `entry` answers them (ENTRY_FIELDS in protocol.ts).
P.ENTRY_FIELDS = {
  'kind', 'name', 'prologue', 'epilogue', 'has_prose', 'args_text', 'run_args_text', 'untrusted_arg_names', 'item_text',
  'run_id', 'section_name', 'task_id', 'prompt_name', 'prompt_title', 'prompt_description',
}

--- The entry's facts by name, from the leaf `entry`'s values.
function P.decode_entry(...)
  local entry = {}
  for i, field in ipairs(P.ENTRY_FIELDS) do entry[field] = (select(i, ...)) end
  return entry
end

--- The values of an entry's facts (the driver's side: for the round-trip test).
function P.encode_entry(entry)
  local values = {}
  for i, field in ipairs(P.ENTRY_FIELDS) do values[i] = entry[field] end
  return table_unpack(values, 1, #P.ENTRY_FIELDS)
end

-- Effects ---------------------------------------------------------------------------------

--- A store or clock effect: its op and its payload as JSON text.
function P.encode_effect(op, payload)
  return 'effect', op, payload
end

--- A model round's fields, in the order they cross (ROUND_FIELDS in protocol.ts):
--- head       the round's head (role, config and turn) as JSON text
--- role, turn the role's label and the round's turn
--- tools      the rendered tool list's JSON; nil when a loop round's list did not change
--- tool_map   the list's wire names to tool ids as JSON; only with the section's first loop round
--- fuse       whether the reply's calls may run with the round
--- one_off    a one-off round (models.infer): over its own single record, with no tools
--- from       where the changed records start in the conversation (1-based)
--- count      how many records changed
--- fused_records  true when the changed records are those the driver made with the last
---            (fused) round: it keeps their texts, so they are not sent back
P.ROUND_FIELDS = { 'head', 'role', 'turn', 'tools', 'tool_map', 'fuse', 'one_off', 'from', 'count', 'fused_records' }

--- A model round as the effect crosses: its fields, then the `n` changed records' texts of
--- `texts` (none when they are the driver's fused records).
function P.encode_round(round, texts, n)
  if round.fused_records then n = 0 end
  return 'effect', 'model.round', round.head, round.role, round.turn, round.tools, round.tool_map, round.fuse,
    round.one_off, round.from, round.count, round.fused_records, table_unpack(texts, 1, n)
end

--- A round's head, the JSON text of its role's config, its role and its turn (keys sorted,
--- as json.lua writes them), made of its start, which stays the same while the role and
--- config do, and the turn: round_head(round_head_start(config_json, role_json), turn).
function P.round_head_start(config_json, role_json)
  return '{"config":' .. config_json .. ',"role":' .. role_json .. ',"turn":'
end
function P.round_head(start, turn)
  return start .. turn .. '}'
end

--- The JSON text of a one-off round's user record, from its content's JSON text.
function P.user_record(content_json)
  return '{"content":' .. content_json .. ',"role":"user"}'
end

--- An entry of a round's rendered tool list (its `tools` field, a JSON list of them), from the
--- JSON texts of its name, description and parameters (a task built-in's entry comes whole,
--- in the same layout, from the leaf `catalog`).
function P.tool_entry(name_json, description_json, parameters_json)
  return '{"name":' .. name_json .. ',"description":' .. description_json .. ',"parameters":' .. parameters_json .. '}'
end

--- A JSON list from its items' JSON texts.
function P.json_list(items)
  return '[' .. table.concat(items, ',') .. ']'
end

--- A round's tool map (its `tool_map` field): the rendered list's wire names to tool ids, as
--- a JSON object, from the JSON texts of the wire names and of the ids, in two lists.
function P.tool_map(wires, ids)
  local members = {}
  for i, wire in ipairs(wires) do members[i] = wire .. ':' .. ids[i] end
  return '{' .. table.concat(members, ',') .. '}'
end

--- A model round's fields and texts by name, from the values after 'effect' (the driver's
--- side: for the round-trip test).
function P.decode_round(...)
  local round = {}
  for i, field in ipairs(P.ROUND_FIELDS) do round[field] = (select(i + 1, ...)) end
  local texts = { select(#P.ROUND_FIELDS + 2, ...) }
  return round, texts
end

--- A round's successful answer read in place, where it came (values[at + 1] is the content):
--- the content, the number of calls, the assistant record (nil for a one-off round), and
--- whether the driver ran the calls with the round (fused). Its calls are read with
--- reply_call, and a fused round's results with fused_result, rather than copied into tables:
--- a loop round reads each once.
function P.decode_reply(values, at)
  local count = values[at + 2]
  local record_at = at + 3 + 3 * count
  return {
    values = values, at = at, content = values[at + 1], count = count,
    record = values[record_at], record_at = record_at, fused = values.n > record_at,
  }
end

--- Call k (from 1) of a reply: its id, name and arguments JSON.
function P.reply_call(reply, k)
  local values, i = reply.values, reply.at + 3 * k
  return values[i], values[i + 1], values[i + 2]
end

--- The result of a fused reply's call k (from 1): the text the model reads and the tool record's JSON.
function P.fused_result(reply, k)
  local values, i = reply.values, reply.record_at + 3 * k
  return values[i - 1], values[i]
end

--- A failure's error, from its values (values[at + 1] is false): its Lua kind and its message.
function P.failure(values, at)
  return values[at + 2], values[at + 3]
end

-- Tool-call batches -----------------------------------------------------------------------

--- A batch call's fields, in the order they cross (BATCH_CALL_FIELDS in protocol.ts).
P.BATCH_CALL_FIELDS = { 'tool', 'name', 'args_json', 'caller', 'call_id', 'turn' }

--- A tool-call batch as it crosses: 'batch', the number of calls, then each call's fields.
function P.encode_batch(calls)
  local flat, n = {}, 0
  for _, c in ipairs(calls) do
    flat[n + 1], flat[n + 2], flat[n + 3], flat[n + 4], flat[n + 5], flat[n + 6] =
      c.tool, c.name, c.args_json, c.caller, c.call_id, c.turn
    n = n + 6
  end
  return 'batch', #calls, table_unpack(flat, 1, n)
end

--- A batch's answers, in call order: each {ok, text, record}, from the values where they came
--- (values[at + 1] is the first call's ok).
function P.decode_batch_answers(values, at, count)
  local out = {}
  for k = 1, count do
    local i = at + 3 * k
    out[k] = { ok = values[i - 2], text = values[i - 1], record = values[i] }
  end
  return out
end

-- Engine operations -----------------------------------------------------------------------
-- Asked for with R.request, which yields R.MARK and these values; the driver answers each.

--- A section call: its name and its arguments as a JSON array. Answered true and the text it
--- returned (nil when it fell through), or a failure.
function P.encode_call(name, args_json)
  return 'call', name, args_json
end

--- Waiting for tasks: their ids as a JSON array, and whether the model's built-in waits (its
--- outcomes then come as they are, not wrapped one by one). Answered with the outcomes' JSON
--- and whether any of the tasks had seen untrusted text.
function P.encode_await(ids_json, for_model)
  return 'await', ids_json, for_model
end

--- A fanout: the section's name and the items as a JSON array. Answered true and the results'
--- JSON, or a failure with a fourth value, the id of the task that failed.
function P.encode_fanout(name, items_json)
  return 'fanout', name, items_json
end

--- A jump to a section: the entry ends there, never answered.
function P.encode_jump(name)
  return 'jump', name
end

--- An effect whose values the leaf `answered` kept (it could not answer them at once): the
--- driver waits for the answer and resumes the thread with it, as the leaf would have.
function P.encode_kept()
  return 'kept'
end

--- A pause the count hook decided inside a user coroutine, passed up to the section's thread
--- (where it can yield): answered with no values.
function P.encode_pause()
  return 'pause'
end

-- The entry's end -------------------------------------------------------------------------

--- The entry returned a value (its text), or fell through its last block.
function P.end_return(text)
  return 'return', text
end
function P.end_fall()
  return 'fall'
end

--- The entry raised an error: its Lua kind, its message and the traceback (nil without one).
function P.end_error(kind, message, traceback)
  return 'error', kind, message, traceback
end

--- The run's stop reached the entry (the driver reads why from the run).
function P.end_stop()
  return 'stop'
end

-- The catalog -----------------------------------------------------------------------------

--- The fields of the catalog's Packs, unavailable Packs and tools, in the order they cross
--- (CATALOG_PACK_FIELDS ... in protocol-leaves.ts). A tool's wire is nil for a tool the run
--- left out of its offering.
P.CATALOG_PACK_FIELDS = { 'id', 'declared' }
P.CATALOG_UNAVAILABLE_FIELDS = { 'id', 'reason' }
P.CATALOG_TOOL_FIELDS = { 'id', 'description', 'pack', 'wire', 'output', 'trusted' }

--- The catalog's lists by name, from the leaf `catalog`'s values packed (table.pack): each
--- list's items as tables of their fields.
function P.decode_catalog(v)
  local at = 1
  local catalog = { packs = {}, unavailable = {}, tools = {} }
  for k = 1, v[at] do
    catalog.packs[k] = { id = v[at + 1], declared = v[at + 2] }
    at = at + 2
  end
  at = at + 1
  for k = 1, v[at] do
    catalog.unavailable[k] = { id = v[at + 1], reason = v[at + 2] }
    at = at + 2
  end
  at = at + 1
  for k = 1, v[at] do
    catalog.tools[k] = { id = v[at + 1], description = v[at + 2], pack = v[at + 3], wire = v[at + 4], output = v[at + 5], trusted = v[at + 6] }
    at = at + 6
  end
  return catalog
end

--- The catalog's values (the driver's side: for the round-trip test).
function P.encode_catalog(catalog)
  local v, n = {}, 0
  local function put(...)
    for i = 1, select('#', ...) do v[n + i] = (select(i, ...)) end
    n = n + select('#', ...)
  end
  put(#catalog.packs)
  for _, p in ipairs(catalog.packs) do put(p.id, p.declared) end
  put(#catalog.unavailable)
  for _, u in ipairs(catalog.unavailable) do put(u.id, u.reason) end
  put(#catalog.tools)
  for _, t in ipairs(catalog.tools) do put(t.id, t.description, t.pack, t.wire, t.output, t.trusted) end
  return table_unpack(v, 1, n)
end

-- Var reads -------------------------------------------------------------------------------

--- The tags the leaf `var_get` answers (VAR_TAGS in protocol-leaves.ts): nothing at the path,
--- JSON null, a table (read through a view, key by key), a scalar (its value follows).
P.VAR_TAGS = { absent = 'nil', null = 'null', table = 'table', scalar = 'scalar' }
local var_kinds = {}
for kind, tag in next, P.VAR_TAGS do var_kinds[tag] = kind end

--- A var read by kind (absent, null, table or scalar) and, for a scalar, its value.
function P.decode_var_read(tag, value)
  return var_kinds[tag], value
end

--- The values of a var read (the driver's side: for the round-trip test).
function P.encode_var_read(kind, value)
  if kind == 'scalar' then return P.VAR_TAGS[kind], value end
  return P.VAR_TAGS[kind], nil
end

-- Events ----------------------------------------------------------------------------------

--- An event's fields as (name, value) pairs in a list, and the list's length, when every field
--- is a string, a boolean or a finite number; nil otherwise (the fields then cross as JSON).
--- Encoding JSON in Lua costs several microseconds even for one field.
function P.event_pairs(fields)
  local flat, n = {}, 0
  for k, v in next, fields do
    local t = type(v)
    if type(k) ~= 'string' or not (t == 'string' or t == 'boolean' or (t == 'number' and v == v and v ~= math_huge and v ~= -math_huge)) then
      return nil
    end
    flat[n + 1], flat[n + 2] = k, v
    n = n + 2
  end
  return flat, n
end

return P
