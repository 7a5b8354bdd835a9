/**
 * The prelude of runvil/user-input, as the Tools chapter prints it ("Pack preludes"). Lua
 * source held as a string, so that no bundler needs a loader for `.lua` files.
 */

/** The Lua source of the user-input prelude: defines `input.ask()`. */
export const USER_INPUT_PRELUDE = `local pack = ...
input = {}
function input.ask(...)
  if select('#', ...) > 0 then
    error("input.ask takes no arguments", 2)
  end
  return tools.call(pack .. "/ask")
end
`;
