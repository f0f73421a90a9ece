--- driver: the one scenario driver, with a kernel backend and a model
-- backend behind one small interface. A kernel scenario
-- (`mountns.scenario`) and a model scenario (`mountns.model.scenario`)
-- differ only in what executes a step; what they share lives here once:
-- reading a scenario's arguments (`[name,] fn [, opts], ...`) and options,
-- its timeout (`opts.timeout`, else `mountns run --timeout`, else
-- `DEFAULT_TIMEOUT`), its time (one clock), the script's run it reports
-- to under `mountns run` (`run_script`), its ending (the picture and the
-- golden text of the namespaces open at its end) and its result
-- (returned, raised, or reported).
--
-- A backend is a table:
--
-- * `OPTIONS`: the names of its options (`timeout` and `label` at least);
-- * `enter(name, level)` (optional): called once the name and fn are read
--   (the kernel's refuses a scenario inside a running one; `level`: the
--   scenario's caller, as `error` counts it from `enter`);
-- * `check(opts, argn, level, run)` (optional): its own options checked,
--   raising at `level` (as for `enter`); `run`: the script's run options
--   or nil; what it returns is handed to `run` (the model's world and
--   first namespace);
-- * `prepare()` (optional): what may fail before the scenario starts and
--   fails it (the kernel's template namespace);
-- * `starts`: true when the runner hears the scenario's start (a process
--   it bounds: the kernel's);
-- * `run(fn, opts, ask, checked, ...)`: runs fn(first namespace, ...)
--   within `ask.timeout`; returns `true`, the ending (`driver.ending`, or
--   nil) and fn's results, or `false`, the error and (when it has one)
--   the ending: `status` (`mountns.verdict`'s, else told from the error)
--   and `artifacts` (`ask.artifacts`: run --artifacts).
-- @module mountns.driver

local argcheck = require "mountns.args"
local verdict = require "mountns.verdict"
local lazy = require "mountns.lazy" -- loaded on first use (an ending's):
local format = lazy.require "mountns.format"
local dot = lazy.require "mountns.dot"
-- only for the clock (the model loads without core.so: see `clock`)
local has_core, core = pcall(require, "mountns.core")

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

--- A scenario's timeout when neither it nor `mountns run` gives one, in
-- seconds.
M.DEFAULT_TIMEOUT = 60

--- The one clock of a scenario's time and timeout: the monotonic wall
-- clock (core.clock), so a scenario that sleeps or waits counts as one
-- that computes; without core.so (the model loads without it) the CPU
-- time, which a model scenario can only spend (nothing there can wait).
M.clock = has_core and core.clock or os.clock
local clock = M.clock

-- The options of `run_script` while a script runs under `mountns run`
-- (in the runner's child for that script), else nil; `count`: the
-- scenarios the script has reached so far (their index in the file).
local running
local count = 0

--- The options of the script's run now (`run_script`), or nil.
function M.running()
  return running
end

--- Run a script's chunk the way `mountns run` does: every scenario it
-- runs, on either backend, reports to `opts.report` and returns nil when
-- it fails instead of raising (`mountns.scenario.run_file` checks the
-- options and calls this).
-- @tparam table opts run_file's options
-- @tparam function chunk the script
-- @treturn boolean whether the chunk ran to its end
-- @return its error
function M.run_script(opts, chunk)
  local saved, saved_count = running, count
  running, count = opts, 0
  local ok, err = pcall(chunk)
  running, count = saved, saved_count
  return ok, err
end

--- What a scenario leaves at its end, as `ask` asks for it: `dot`, the
-- picture of the open namespaces (Graphviz, titled `ask.dot`), `golden`,
-- their golden text; false where the rendering failed. Runs where the
-- namespaces are (the kernel scenario's child). nil when nothing is
-- asked: it then crosses a process as one byte.
-- @tparam table ask the driver's (`dot`: a title, `golden`: a boolean)
-- @tparam table open the namespaces open at the end
-- @treturn ?table `{dot = text|false, golden = text|false}`
function M.ending(ask, open)
  if not (ask.dot or ask.golden) then return nil end
  local ended = {}
  if ask.golden then
    local ok, text = pcall(format.golden_text, unpack(open))
    ended.golden = ok and text or false
  end
  if ask.dot then
    local all = { unpack(open) }
    all[#all + 1] = { normalize = true, title = ask.dot }
    local ok, text = pcall(dot.dot, unpack(all))
    ended.dot = ok and text or false
  end
  return ended
end

-- The end of a scenario: `ok`, then the ending and fn's results or the
-- error (a backend's run's results; a failure may bring its ending: its
-- artifacts and `status`, what it was). Under a run reported with its
-- status (`mountns.verdict`), nil returned for a failure; else fn's
-- results returned or its error raised. (Its arguments, not a table: a
-- model scenario is a few microseconds.)
local function conclude(run, title, t0, ok, x, ...)
  if run then
    local ended = (ok and x) or (not ok and (...)) or {}
    local status = ok and "pass" or ended.status or verdict.status_of(x)
    run.report(title, ok, not ok and x or nil, clock() - t0, ended.dot, ended.golden,
               ended.notes, status, ended.artifacts)
    if not ok then return nil end
  elseif not ok then
    error(x, 0)
  end
  return ...
end

--- Run a scenario on a backend: `[name,] fn [, opts], ...` read and
-- checked (usage errors raised at `level`, as `error` counts it from the
-- caller of this function), then run; fn's results returned, or its
-- error raised; under `mountns run` (`run_script`) reported, nil returned
-- for a failure.
-- @tparam table backend see the module's description
-- @tparam int level
-- @tparam[opt] string name the scenario's name (shown by `mountns run`)
-- @tparam function fn called as fn(first namespace, ...)
-- @tparam[opt] table opts the backend's `OPTIONS`
-- @return fn's results
function M.scenario(backend, level, name, fn, opts, ...)
  level = level + 1
  local argn = 3
  if type(name) == "function" then
    name, fn, opts, argn = nil, name, fn, 2
  elseif name ~= nil then
    -- a report prints it (a table would print as its address, or a mount
    -- table as its rows)
    argcheck.typed(name, "string", "scenario", 1, level)
  end
  argcheck.typed(fn, "function", "scenario", argn - 1, level)
  if backend.enter then backend.enter(name, level + 1) end
  local run = running
  -- under `mountns run`: the scenario's place in its file, and whether the
  -- run selected it (--filter, --shard, --list): one not selected is not
  -- run at all (no process, no namespace), only counted
  if run and run.select then
    count = count + 1
    if not run.select(count, name or "(unnamed scenario)") then return nil end
  end
  opts = argcheck.options(opts, "scenario", argn, backend.OPTIONS, level)
  argcheck.seconds(opts.timeout, "scenario", argn, "option 'timeout'", level)
  local checked = backend.check and backend.check(opts, argn, level + 1, run)
  local title = name or "(unnamed scenario)"
  local ask = { timeout = opts.timeout or (run and run.timeout) or M.DEFAULT_TIMEOUT }
  if run then
    ask.dot, ask.golden, ask.both = run.dot and title or nil, run.golden, run.both
    ask.artifacts, ask.title = run.artifacts, title
  end
  local t0 = clock()
  if backend.prepare then
    local ok, err = pcall(backend.prepare)
    if not ok then return conclude(run, title, t0, false, err) end
  end
  -- under mountns run: the runner learns that the scenario's process
  -- starts, and bounds it too (report closes it)
  if run and run.start and backend.starts then run.start(title, ask.timeout) end
  return conclude(run, title, t0, backend.run(fn, opts, ask, checked, ...))
end

return M
