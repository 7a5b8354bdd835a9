-- The runtime's entry point: builds the section's sandbox environment with every Engine
-- global, then defines `__rv_bind`, which gives the VM its entry, and `__rv_main`, the
-- function the Engine runs as the section's thread.
local R, sandbox, state, walk, modules = ...
local L = R.leaves
local json = R.json

-- Everything this chunk does is the same for every entry: a section VM starts with it done
-- (entry/driver.ts's template, saved in a memory region), and __rv_bind, below, gives the VM
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
  local e = R.protocol.decode_entry(L.entry())
  entry.kind, entry.name, entry.prologue, entry.epilogue, entry.has_prose = e.kind, e.name, e.prologue, e.epilogue, e.has_prose
  entry.args = e.args_text and json.decode(e.args_text) or { n = 0 }
  entry.args.n = entry.args.n or #entry.args
  sandbox.seed(L.seed())
  env.args = json.decode(e.run_args_text)
  env.argv = json.copy(env.args)
  if e.untrusted_arg_names then state.hold_untrusted_args(env.args, env.argv, json.decode(e.untrusted_arg_names)) end
  local facts = {
    run_id = e.run_id, execution = e.run_id, section_name = e.section_name, task_id = e.task_id,
    prompt_name = e.prompt_name, prompt_title = e.prompt_title, prompt_description = e.prompt_description,
  }
  env.sys = state.sys(facts)
  -- A fanout arm's item; nil in every other entry.
  if e.item_text then env.item = json.decode(e.item_text) end
  env.prompt = state.sealed('prompt', { name = facts.prompt_name, title = facts.prompt_title, description = facts.prompt_description })
end

-- The Engine's namespaces, each a table its module fills, sealed as the section sees it
-- (messages keeps a metatable of its own, models.lua's, which guards its writes).
R.namespaces = {}
for _, name in ipairs({ 'tools', 'packs', 'models', 'messages', 'compactors', 'tasks' }) do
  local t = {}
  R.namespaces[name] = t
  env[name] = name == 'messages' and t or state.sealed(name, t)
end
-- The modules are installed here, once per template: a VM restored from the image starts
-- with them ready. (Which Pack preludes run depends on the run: R.install_preludes asks, at
-- the start of every entry.)
for _, name in ipairs({ 'tools', 'messages', 'models', 'prelude' }) do modules[name](R, env) end
-- But tasks, on the first use of the `tasks` global or of a task built-in: few entries use
-- it, and the template, which counts in every VM's memory (a prompt's memoryBytes) and is
-- copied back for every entry, is 11 KB smaller without it. Its code is loaded then, as
-- bytecode, by __rv_module (LuaVm.setModuleLoader: the driver's LAZY_MODULES).
local load_module = __rv_module
__rv_module = nil
local tasks_installed = false
function R.install_tasks()
  if tasks_installed then return end
  tasks_installed = true
  setmetatable(R.namespaces.tasks, nil)
  load_module('tasks')()(R, env)
end
setmetatable(R.namespaces.tasks, {
  __index = function(self, k) R.install_tasks(); return self[k] end,
  __pairs = function(self) R.install_tasks(); return R.env_pairs(self) end,
})

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
  if rawequal(outcome, R.STOP) then return R.protocol.end_stop() end
  local err_kind, message = R.describe_error(outcome)
  return R.protocol.end_error(err_kind, message, last_traceback)
end


-- The template ends with a full collection: every VM then starts with its garbage collector
-- at the start of a cycle, its pace set by what the runtime really holds, whatever garbage
-- loading the runtime left (a prompt near its memoryBytes relies on collections keeping up:
-- test/engine/resource-budget.test.ts fills most of a 16 MiB heap twice).
collectgarbage()
