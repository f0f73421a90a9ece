--- model.scenario: the model backend of the scenario driver
-- (`mountns.driver`, which reads the arguments, keeps the time, reports):
-- a fresh world, its first namespace handed to fn in this process,
-- bounded by its timeout (a count hook: no child to kill).
-- @module mountns.model

local argcheck = require "mountns.args"
local driver = require "mountns.driver"
local verdict = require "mountns.verdict"
local world = require "mountns.model.world"
local kernel_rules = require "mountns.model.rules"
local checks = require "mountns.model.checks"
-- (world:namespace, the first namespace, is the namespace class's)
local space = require "mountns.model.space"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore
local new_world, open_namespaces = world.new_world, world.open_namespaces
local rules_for, NO_OPTIONS = kernel_rules.rules_for, checks.NO_OPTIONS
local _ = space -- (required for its World:namespace)

local function pack(...)
  return { n = select("#", ...), ... }
end

local function pass(...)
  return ...
end

-- the driver's clock: a scenario's timeout as its time
local clock = driver.clock
-- instructions between two looks at the clock: about 0.1 ms of the
-- model's work, a fraction of a percent of its time
local HOOK_COUNT = 10000

-- The message of a model scenario stopped at its timeout: a kernel
-- scenario's (isolate.spawn: "isolate: child PID ran past its timeout of
-- 1 s and was killed"), for a scenario that has no child of its own.
local function timeout_message(timeout)
  return string.format("model: the scenario ran past its timeout of %g s and was stopped",
    timeout)
end

-- xpcall(body, handler), stopped at the timeout as a kernel scenario is:
-- false and timeout_message when it ran past it.
--
-- A model scenario runs in the caller's process (no fork: the model's
-- point), so no parent can kill it at its deadline: a count hook
-- (debug.sethook) looks at the clock every HOOK_COUNT instructions and,
-- once past it, raises the timeout error wherever the scenario's code runs,
-- and from then on at every instruction: a scenario that catches it
-- (pcall in a loop) gets it again at its next instruction outside the
-- pcall, up to `body`. The hook does not raise in `handler` (the error
-- being handled) or once body has returned. Under `mountns run --model`
-- Ctrl-C is the runner's, as for a kernel scenario: it reads SIGINT and
-- kills the script's process (the scenario's with it); elsewhere the
-- interpreter's own SIGINT hook (lua.c's) raises "interrupted!" in it.
--
-- LuaJIT runs no hook inside compiled code (a trace), so a `while true do
-- end` once compiled would never see it: while a model scenario runs the
-- compiler is off and its traces flushed (jit.off + jit.flush: off alone
-- leaves compiled loops running, and jit.off(fn, true) would cover fn's
-- own closures only, not a function of the script it calls); it is back
-- on after. The model runs interpreted there meanwhile.
--
-- What a hook cannot stop: a C function that blocks or runs long (no Lua
-- instruction to count), a coroutine made before the scenario or through
-- a coroutine.create saved before it (PUC Lua's hooks are per coroutine:
-- see `hooked`), an xpcall saved before it whose message handler loops,
-- a finalizer (__gc) that loops (no hook runs in one), a scenario that
-- replaces the hook itself.
local function bounded(body, handler, timeout)
  local thread = coroutine.running()
  local deadline = clock() + timeout
  local expired = false
  -- whether the code at the hook's level 2 is the scenario's: a coroutine
  -- it resumed, or below body on this one, handler not between them
  local function in_scenario()
    if coroutine.running() ~= thread then return true end
    local level = 3
    while true do
      local info = debug.getinfo(level, "f")
      if not info or info.func == handler then return false end
      if info.func == body then return true end
      level = level + 1
    end
  end
  local live = true -- until body has returned
  local function hook()
    -- a coroutine the scenario made, resumed after it (PUC Lua: its hook
    -- is its own): not bounded any more
    if not live then return debug.sethook() end
    if not expired then
      if clock() < deadline then return end
      expired = true
    end
    debug.sethook(hook, "", 1) -- this coroutine: every instruction from now
    if in_scenario() then error(timeout_message(timeout), 0) end
  end
  local old_hook, old_mask, old_count = debug.gethook()
  local jit_was_on = jit and jit.status()
  if jit_was_on then
    jit.off()
    jit.flush()
  end
  -- PUC Lua keeps a debug.sethook hook per coroutine and a new one has
  -- none: a coroutine the scenario makes (coroutine.create, .wrap) sets
  -- the hook in itself first
  local create, wrap = coroutine.create, coroutine.wrap
  local function hooked(f)
    return function(...)
      if live then debug.sethook(hook, "", HOOK_COUNT) end
      return f(...)
    end
  end
  -- (what is no function goes as it is: the same bad argument)
  rawset(coroutine, "create", function(f)
    if type(f) ~= "function" then return create(f) end
    return create(hooked(f))
  end)
  rawset(coroutine, "wrap", function(f)
    if type(f) ~= "function" then return wrap(f) end
    return wrap(hooked(f))
  end)
  -- a message handler called for the hook's error runs in the hook, where
  -- no hook runs: past the deadline the scenario's own (xpcall's) are not
  -- called, so one that loops cannot hold the scenario
  local xpcall_ = xpcall
  rawset(_G, "xpcall", function(f, h, ...)
    if type(h) ~= "function" then return xpcall_(f, h, ...) end
    return xpcall_(f, function(e)
      if expired then return e end
      return h(e)
    end, ...)
  end)
  debug.sethook(hook, "", HOOK_COUNT)
  local res = pack(xpcall_(body, handler))
  live = false
  if type(old_hook) == "function" then
    debug.sethook(old_hook, old_mask, old_count)
  else
    debug.sethook()
  end
  rawset(coroutine, "create", create)
  rawset(coroutine, "wrap", wrap)
  rawset(_G, "xpcall", xpcall_)
  if jit_was_on then jit.on() end
  -- past the deadline the verdict is the timeout, whatever the scenario
  -- made of the error (caught it, raised another)
  if expired then return false, verdict.mark("timeout", timeout_message(timeout)) end
  return unpack(res, 1, res.n)
end

-- a scenario's message handler: a failed check and a skip stay what they
-- are (mountns.verdict), an error gets its traceback
local function traceback(e)
  if type(e) == "string" and verdict.status_of(e) == "error" then
    return debug.traceback(e, 2)
  end
  return e
end

--- The model backend (see `mountns.driver`): `timeout` and `label`, and
-- the model's own `locked_root` (see `world:namespace`) and `linux` (the
-- kernel whose rules it follows: see `model.new`; under `mountns run
-- --model --linux V`, V).
local backend = { OPTIONS = { "timeout", "label", "locked_root", "linux" } }
M.backend = backend

-- the first namespace of a fresh world, made before the scenario's time
-- starts (their usage errors raised at the scenario's caller)
function backend.check(opts, argn, level, run)
  if opts.locked_root ~= nil and type(opts.locked_root) ~= "boolean" then
    argcheck.error("scenario", argn, "option 'locked_root' must be a boolean, got "
      .. type(opts.locked_root), level + 1)
  end
  local linux = opts.linux
  if linux == nil and run then linux = run.linux end
  local w = new_world(rules_for(linux, "scenario", argn, level + 1))
  return w:namespace(opts.label == nil and opts.locked_root == nil and NO_OPTIONS
    or { label = opts.label, locked_root = opts.locked_root })
end

-- bounded's results as the driver takes them: true, the ending (the
-- picture and golden text only for a scenario that passed, which the
-- runner shows: one stopped at its timeout may have left a model call
-- half done), fn's results; or false and the error
local function ended(ask, w, ok, ...)
  if not ok then return false, ... end
  return true, (ask.dot or ask.golden) and driver.ending(ask, open_namespaces(w)) or nil, ...
end

function backend.run(fn, _, ask, first, ...)
  -- (Lua 5.1's xpcall passes no arguments: a closure; fn called through
  -- `pass`, not in a tail call, so body stays on the stack while fn runs:
  -- `bounded` looks for it there)
  local body
  if select("#", ...) == 0 then
    body = function() return pass(fn(first)) end
  else
    local args = pack(...)
    body = function() return pass(fn(first, unpack(args, 1, args.n))) end
  end
  return ended(ask, first.world, bounded(body, traceback, ask.timeout))
end

--- Run a scenario on the model: the signature and option checks of
-- `mountns.scenario` (`timeout`: seconds, default 60 or `mountns run
-- --timeout`, the scenario stopped there as `bounded` says; `label`), and
-- the model's own `locked_root` and `linux` (see `backend`). Under
-- `mountns run` reported as a kernel scenario is (`mountns.driver`).
-- @tparam[opt] string name
-- @tparam function fn called as fn(ns, ...) with the first namespace
-- @tparam[opt] table opts
-- @return fn's results
function M.scenario(...)
  -- driver.scenario not in a tail call (its results are pass's
  -- arguments): its usage errors name the caller's line
  return pass(driver.scenario(backend, 2, ...))
end

return M
