/**
 * The runtime's entry point: builds the section's sandbox environment with every Engine
 * global, then defines `__rv_main`, the function the Engine runs as the section's thread.
 */
export const MAIN_LUA = String.raw`
local R, sandbox, state, walk = ...
local L = R.leaves
local json = R.json

local kind, name, prologue, epilogue, has_prose, args_text, run_args_text, item_text,
  run_id, section_name, task_id, prompt_name, prompt_title, prompt_description = L.entry()
local entry = {
  kind = kind, name = name, prologue = prologue, epilogue = epilogue, has_prose = has_prose,
  args = args_text and json.decode(args_text) or { n = 0 },
}
entry.args.n = entry.args.n or #entry.args
R.entry = entry
R.handler_depth = 0

local main_thread = nil
local seed_hi, seed_lo = L.seed()
local env = sandbox.new_env(seed_hi, seed_lo, function() return main_thread end, state.log)
R.env = env
R.env_pairs = sandbox.pairs

env.json = json.public()
env.var = state.var(false)
env.store = state.store()
env.log = state.log
env.untrusted = state.untrusted
env.args = json.decode(run_args_text)
env.argv = json.copy(env.args)
local facts = {
  run_id = run_id, execution = run_id, section_name = section_name, task_id = task_id,
  prompt_name = prompt_name, prompt_title = prompt_title, prompt_description = prompt_description,
}
env.sys = state.sys(facts)
walk.install(env, entry)

-- A fanout arm's item; nil in every other entry.
if item_text then env.item = json.decode(item_text) end
env.prompt = state.sealed('prompt', { name = facts.prompt_name, title = facts.prompt_title, description = facts.prompt_description })
env.ui = state.ui()

-- tools, packs, models, messages and tasks load on first use: most sections never touch them, and
-- a section VM is made per entry, so the runtime a VM loads up front is kept small.
local load_module = __rv_module
__rv_module = nil
local MODULE_TABLES = { tools = { 'tools', 'packs' }, models = { 'models', 'messages', 'compactors' }, tasks = { 'tasks' } }
local loaded = {}
function R.ensure(name)
  if loaded[name] then return end
  loaded[name] = true
  if name == 'models' then R.ensure('tools') end
  for _, t in ipairs(MODULE_TABLES[name] or {}) do setmetatable(R.lazy_tables[t], nil) end
  load_module(name)()(R, env)
end
R.lazy_tables = {}
for module, names in pairs(MODULE_TABLES) do
  for _, n in ipairs(names) do
    local t = setmetatable({}, {
      __index = function(self, k) R.ensure(module); return self[k] end,
      __pairs = function(self) R.ensure(module); return R.env_pairs(self) end,
    })
    R.lazy_tables[n] = t
    env[n] = t
  end
end
R.model_step = function(e)
  R.ensure('models')
  return R.model_step(e)
end
function R.install_preludes()
  if L.prelude(0) == 0 then return end
  R.ensure('prelude')
  return R.install_preludes()
end

local last_traceback = nil
local function on_error(err)
  if err ~= R.STOP then
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
  if outcome == R.STOP then return 'stop' end
  local err_kind, message = R.describe_error(outcome)
  return 'error', err_kind, message, last_traceback
end
`;
