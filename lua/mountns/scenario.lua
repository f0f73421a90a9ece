--- Scenarios: several mount namespaces described in one Lua function.
-- `mountns.scenario([name,] fn, opts)` runs `fn(ns)` in an isolated child
-- whose `/` is a brand-new tmpfs (pivot_root), so a script can use the
-- seed article's absolute paths (`/X`, `/Y`, `/Z`) verbatim and
-- `ns:mounts()` shows only what the script mounted. `ns` is the first
-- namespace (the article's `sh1`), of the class `mountns.namespace`;
-- `ns:unshare()` makes more. This module is the runner only.
-- @module mountns.scenario

local core = require "mountns.core"
local isolate = require "mountns.isolate"
local argcheck = require "mountns.args"
local child = require "mountns.child"
local ops = require "mountns.ops"
local namespace = require "mountns.namespace"
local dot = require "mountns.dot"
local format = require "mountns.format"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...)
  return { n = select("#", ...), ... }
end

-- The class, for code that used it from here (mountns.luassert).
M.Namespace = namespace.Namespace
M.is_namespace = namespace.is_namespace
M.peer_groups = namespace.peer_groups

-- Set in a scenario's child while its function runs: `nested` is the
-- message of a scenario called inside it (it fails the outer one).
local inside

-- ---- scenario set-up inside the isolated child --------------------------

-- pivot_root into a fresh tmpfs so the scenario sees only its own mounts.
local function make_root()
  assert(core.pin_proc()) -- /proc is gone after the pivot: keep an O_PATH fd
  assert(core.mount("mountns", "/tmp", "tmpfs", nil, "mode=0755"))
  assert(ops.pivot_root("/tmp"))
end

-- os.execute and io.popen run /bin/sh, which a scenario's / (a tmpfs) has
-- not: they would do nothing (os.execute) or fail obscurely (io.popen), and
-- os.execute("kill ...") would let a scenario pass silently. They raise.
local function no_shell()
  local function refuse(name)
    return function()
      error(name .. " is not available inside a scenario (its / is a tmpfs "
        .. "without /bin/sh): run host tools with ns:exec{program, args...}", 2)
    end
  end
  rawset(os, "execute", refuse("os.execute"))
  rawset(io, "popen", refuse("io.popen"))
end

-- The picture of the namespaces still open at the end (for run --dot).
local function picture(title)
  local open = namespace.open_namespaces()
  open[#open + 1] = { normalize = true, title = title }
  local ok, text = pcall(dot.dot, unpack(open))
  return ok and text or false
end

-- The golden text of the namespaces still open at the end (for run --golden).
local function golden()
  local open = namespace.open_namespaces()
  local ok, text = pcall(format.golden_text, unpack(open))
  return ok and text or false
end

-- Runs in the isolated child; returns what `ending` asks for at the end
-- ({dot = the picture, golden = the golden text}: `ending.dot` is the
-- picture's title, `ending.golden` true) then fn's results.
local function run_inside(fn, opts, ending, ...)
  -- Two mount namespaces, on purpose. The isolate's (isolate_with made it,
  -- private) still holds the host's tree: /bin, /lib, PATH, /proc. The
  -- scenario needs a / of its own (a bare tmpfs, pivot_root, the old root
  -- detached), and pivoting in the isolate's namespace would take the
  -- host's tree out of every namespace this process can still enter. So the
  -- scenario keeps a handle on the isolate's namespace (`host`: ns:exec
  -- enters a copy of it to run host tools, which see a scenario
  -- namespace's mounts through the /proc files of ns:pid) and unshares a
  -- second namespace for its own root.
  local host = assert(core.namespace())
  isolate.private_namespace()
  make_root()
  no_shell()
  inside = {}
  local first = namespace.begin(host, opts.label)
  local args = pack(...)
  local res = pack(xpcall(function() return fn(first, unpack(args, 1, args.n)) end,
    function(e)
      -- a failed assertion stays a failure (isolate carries it across)
      if child.is_failure(e) then return e end
      return isolate.traceback(tostring(e), "scenario")
    end))
  -- an inner scenario fails the outer one, even when its error was caught
  if res[1] and inside.nested then res = { false, inside.nested, n = 2 } end
  local ended = { dot = ending.dot and picture(ending.dot) or nil,
                  golden = ending.golden and golden() or nil }
  namespace.finish()
  if not res[1] then error(res[2], 0) end
  return ended, unpack(res, 2, res.n)
end

-- The options of `run_file` while a script runs under `mountns run` (in
-- the runner's child for that script), else nil.
local running

--- Run a scenario.
-- @tparam[opt] string name shown by `mountns run`
-- @tparam function fn called as fn(ns, ...) with the first namespace
-- @tparam[opt] table opts `timeout` (seconds, default 60, or `mountns run
-- --timeout`), `label` of the first namespace
-- @return fn's results (nil, booleans, numbers, strings, tables)
function M.scenario(name, fn, opts, ...)
  local argn = 3
  if type(name) == "function" then
    name, fn, opts, argn = nil, name, fn, 2
  end
  if type(fn) ~= "function" then
    argcheck.error("scenario", argn - 1, "function expected, got " .. type(fn), 2)
  end
  if inside then
    -- this process is a scenario's child: its state, its root and its
    -- namespaces are the outer scenario's
    local level, where = 2, debug.getinfo(2, "Sl")
    while where and where.currentline <= 0 do -- pcall, a tail call: the Lua caller
      level = level + 1
      where = debug.getinfo(level, "Sl")
    end
    local msg = string.format("%sscenarios cannot nest: scenario %s was called inside "
      .. "a running scenario",
      where and (where.short_src .. ":" .. where.currentline .. ": ") or "",
      name and ("'" .. name .. "'") or "(unnamed)")
    inside.nested = inside.nested or msg
    error(msg, 0)
  end
  opts = argcheck.options(opts, "scenario", argn, { "timeout", "label" }, 2)
  argcheck.seconds(opts.timeout, "scenario", argn, "option 'timeout'", 2)
  local run = running
  local t0 = core.clock()
  local title = name or "(unnamed scenario)"
  local res = pack(pcall(isolate.isolate_with,
                         { timeout = opts.timeout or (run and run.timeout) },
                         run_inside, fn, opts, { dot = run and run.dot and title or nil,
                                                 golden = run and run.golden or nil }, ...))
  if run then
    local ended = res[1] and res[2] or {}
    run.report(title, res[1], not res[1] and res[2] or nil, core.clock() - t0,
               ended.dot, ended.golden)
    if not res[1] then return nil end
  elseif not res[1] then
    error(res[2], 0)
  end
  return unpack(res, 3, res.n)
end

--- Run a script in this process the way `mountns run` does (its runner
-- calls this in a child of its own, one per script): every scenario the
-- script runs is reported to `opts.report` and, when it fails, returns nil
-- instead of raising, so the script's later scenarios still run.
-- @tparam string path the script
-- @tparam table opts `report`: called as report(name, ok, err, seconds,
-- dot, golden) after each scenario; `dot`: pass each scenario's picture
-- (Graphviz text of the namespaces open at its end) as `dot`; `golden`:
-- pass the golden text of those namespaces (`mountns.format.golden_text`)
-- as `golden`; `timeout`: the default timeout of every scenario (seconds)
-- @treturn[1] boolean true: the script ran to its end
-- @return[2] nil
-- @treturn[2] string the script's error (loading it, or raised outside a
-- scenario)
function M.run_file(path, opts)
  argcheck.path(path, "run_file", 1, 2)
  opts = argcheck.options(opts, "run_file", 2, { "report", "dot", "golden", "timeout" }, 2)
  if type(opts.report) ~= "function" then
    argcheck.error("run_file", 2, "option 'report': function expected, got "
      .. type(opts.report), 2)
  end
  argcheck.seconds(opts.timeout, "run_file", 2, "option 'timeout'", 2)
  local chunk, err = loadfile(path)
  if not chunk then return nil, err end
  local saved = running
  running = opts
  local ok, e = pcall(chunk)
  running = saved
  if not ok then return nil, tostring(e) end
  return true
end

return M
