-- The runtime's entry point: builds the section's sandbox environment with every Engine
-- global, then defines `__rv_bind`, which gives the VM its entry, and `__rv_main`, the
-- function the Engine runs as the section's thread.
local R, sandbox, state, walk = ...
local L = R.leaves
local json = R.json

-- Everything this chunk does is the same for every entry: a section VM starts with it done
-- (section-entry.ts's template, saved in a memory region), and __rv_bind, below, gives the VM
-- its entry. So nothing here may ask the Engine about the entry.
local entry = {}
R.handler_depth = 0

local main_thread = nil
local env = sandbox.new_env(function() return main_thread end, state.log)
R.env_pairs = sandbox.pairs

-- Every Engine namespace is sealed (state.lua's "Sealing"): a prelude or a block can read
-- it and call it but not replace, wrap or add to what every other caller of it sees.
env.json = state.sealed('json', json.public())
env.var = state.var(false)
env.store = state.sealed('store', state.store())
env.rawset = state.rawset
env.log = state.log
env.untrusted = state.untrusted
walk.install(env, entry)
env.ui = state.ui()

--- Gives the VM its entry: how it was entered, its arguments, the run's facts and seed.
function __rv_bind()
  -- The entry's fields, in the order of ENTRY_FIELDS in src/engine/entry/protocol.ts (its test pins the two).
  local kind, name, prologue, epilogue, has_prose, args_text, run_args_text, item_text,
    run_id, section_name, task_id, prompt_name, prompt_title, prompt_description = L.entry()
  entry.kind, entry.name, entry.prologue, entry.epilogue, entry.has_prose = kind, name, prologue, epilogue, has_prose
  entry.args = args_text and json.decode(args_text) or { n = 0 }
  entry.args.n = entry.args.n or #entry.args
  sandbox.seed(L.seed())
  env.args = json.decode(run_args_text)
  env.argv = json.copy(env.args)
  local facts = {
    run_id = run_id, execution = run_id, section_name = section_name, task_id = task_id,
    prompt_name = prompt_name, prompt_title = prompt_title, prompt_description = prompt_description,
  }
  env.sys = state.sys(facts)
  -- A fanout arm's item; nil in every other entry.
  if item_text then env.item = json.decode(item_text) end
  env.prompt = state.sealed('prompt', { name = facts.prompt_name, title = facts.prompt_title, description = facts.prompt_description })
end

-- tools, packs, models and messages are set up here, once per template: a VM restored from the
-- image starts with them ready. tasks is set up on first use (rarely used), and so is a Pack's
-- prelude, which depends on the run.
local load_module = __rv_module
__rv_module = nil
local MODULE_TABLES = { tools = { 'tools', 'packs' }, models = { 'models', 'messages', 'compactors' }, tasks = { 'tasks' } }
local loaded_chunks = { tools = load_module('tools')(), models = load_module('models')(), prelude = load_module('prelude')() }
local loaded = {}
function R.ensure(name)
  if loaded[name] then return end
  loaded[name] = true
  if name == 'models' then R.ensure('tools') end
  for _, t in ipairs(MODULE_TABLES[name] or {}) do setmetatable(R.lazy_tables[t], nil) end
  local module = loaded_chunks[name] or load_module(name)()
  module(R, env)
end
R.lazy_tables = {}
for module, names in pairs(MODULE_TABLES) do
  for _, n in ipairs(names) do
    local t = setmetatable({}, {
      __index = function(self, k) R.ensure(module); return self[k] end,
      __pairs = function(self) R.ensure(module); return R.env_pairs(self) end,
    })
    R.lazy_tables[n] = t
    -- messages keeps a metatable of its own (models.lua), which guards its writes.
    env[n] = n == 'messages' and t or state.sealed(n, t)
  end
end
R.ensure('models')
function R.install_preludes()
  if L.prelude(0) == 0 then return end
  R.ensure('prelude')
  return R.install_preludes()
end

local last_traceback = nil
local function on_error(err)
  if not rawequal(err, R.STOP) then
    local ok, text = pcall(R.raw.traceback, type(err) == 'string' and err or nil, 2)
    last_traceback = ok and text or nil
  end
  return err
end

function __rv_main()
  main_thread = R.raw.running()
  R.watch(main_thread)
  local ok, outcome, value = xpcall(function()
    R.install_preludes()
    return walk.run_entry(env, entry)
  end, on_error)
  if ok then return outcome, value end
  if rawequal(outcome, R.STOP) then return 'stop' end
  local err_kind, message = R.describe_error(outcome)
  return 'error', err_kind, message, last_traceback
end
