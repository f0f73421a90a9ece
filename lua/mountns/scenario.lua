--- Scenarios: several mount namespaces described in one Lua function.
-- `mountns.scenario([name,] fn, opts)` runs `fn(ns)` in an isolated child
-- whose `/` is a brand-new tmpfs (pivot_root), so a script can use the
-- seed article's absolute paths (`/X`, `/Y`, `/Z`) verbatim and
-- `ns:mounts()` shows only what the script mounted. `ns` is the first
-- namespace (the article's `sh1`), of the class `mountns.namespace`;
-- `ns:unshare()` makes more. This module is the scenario driver's kernel
-- backend (`mountns.driver` reads the arguments, keeps the time and
-- reports): the template namespace, the isolated child and what runs in
-- it; and `run_file`, a script run as `mountns run` runs it.
-- @module mountns.scenario

local core = require "mountns.core"
local isolate = require "mountns.isolate"
local argcheck = require "mountns.args"
local child = require "mountns.child"
local verdict = require "mountns.verdict"
local ops = require "mountns.ops"
local namespace = require "mountns.namespace"
local driver = require "mountns.driver"
local lazy = require "mountns.lazy" -- loaded on first use:
local artifacts = lazy.require "mountns.artifacts"
local model = lazy.require "mountns.model"
local mirror = lazy.require "mountns.mirror"
local shell = lazy.require "mountns.shell"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...)
  return { n = select("#", ...), ... }
end

local function pass(...)
  return ...
end

-- The class, for code that used it from here (mountns.luassert).
M.Namespace = namespace.Namespace
M.is_namespace = namespace.is_namespace
M.peer_groups = namespace.peer_groups

-- Set in a scenario's child while its function runs: `nested` is the
-- message of a scenario called inside it (it fails the outer one).
local inside

-- ---- scenario set-up inside the isolated child --------------------------

-- ---- the template namespace ----------------------------------------------
-- A scenario's / is a fresh tmpfs, so copying the caller's mount table into
-- every scenario is waste, and a cost that grows with that table (3-4.5 us a
-- mount: 30-45 ms a scenario with 10,000 mounts, issue 15). So a process
-- makes once a *template*: a mount namespace whose only mount is a small
-- tmpfs (for an unprivileged caller, owned by a user namespace of its own
-- that maps it to root: "the template's user namespace"). A scenario's
-- child enters it (setns: the user namespace, then the mount namespace) and
-- unshares a copy of it: one unshare per scenario, of one mount; then it
-- mounts its own tmpfs on /root and pivots into it (the template's tmpfs
-- is shared by every copy: a scenario must not write there).
--
-- ns:exec runs host tools and needs the host's files, which the template
-- has not: the template's creator (a short-lived child) first unshares a
-- private copy of the caller's namespace (what isolate's child does), and
-- the caller keeps a handle on it, `host`, beside the template's; ns:exec
-- enters `host` and unshares a copy for the tool (mountns.namespace). That
-- copy is taken once, when the template is made: mounts the caller makes
-- later are not seen by ns:exec. The handles (nsfs fds, close-on-exec) keep
-- the namespaces alive as long as the process. A forked child inherits
-- them and reuses them while it stays in the same user namespace; a child
-- in another one (an unprivileged isolate's) could not enter them and makes
-- its own.
local template -- { pid, userns, host, mnt, user } of this process

local function userns_id()
  local h = assert(core.namespace(nil, "user"))
  local id = h:id()
  h:close()
  return id
end

-- The template's creator: a private copy of the caller's namespace ("host"
-- reported), then, after the caller's go-ahead, the template ("template"
-- reported); it ends when the caller closes `go`.
local function create(report, go)
  isolate.private_namespace()
  assert(child.send(report, "o", "host"))
  assert(core.read_exact(go, 1))
  assert(core.unshare { mount = true, propagation = "private" })
  assert(core.mount("mountns", "/tmp", "tmpfs", nil, "mode=0755,size=64k"))
  assert(core.mkdir("/tmp/root")) -- each scenario's mount point
  assert(ops.pivot_root("/tmp"))
  assert(child.send(report, "o", "template"))
  core.read_all(go)
end

local function make_template()
  local _, euid = core.getuid()
  local proc, ferr = child.spawn({ up = { "report" }, down = { "go" } }, function(fds)
    local ok, err = pcall(create, fds.report, fds.go)
    if not ok then pcall(child.send, fds.report, "e", child.message(err)) end
    return ok and 0 or 1
  end)
  if not proc then error("scenario: the template namespace: " .. ferr, 0) end
  local pid = proc.pid
  local t, err = { pid = core.getpid(), userns = userns_id() }, nil
  local kind, body = proc:receive("report", 30)
  if kind == "o" then
    t.host, err = core.namespace(pid)
    if t.host then
      core.write_fd(proc.fds.go, "1")
      kind, body = proc:receive("report", 30)
    end
  end
  if kind == "o" and not err then
    t.mnt, err = core.namespace(pid)
    if t.mnt and euid ~= 0 then t.user, err = core.namespace(pid, "user") end
  end
  -- the creator ends once `go` is closed; one that failed is killed
  if kind ~= "o" then proc:close(); proc:kill_tree() else proc:finish(30) end
  if kind ~= "o" or err then
    for _, h in ipairs { t.host or false, t.mnt or false } do
      if h then h:close() end
    end
    error("scenario: the template namespace: " .. (err or body), 0)
  end
  return t
end

-- The template of this process, made on first use.
local function get_template()
  local t = template
  local pid = core.getpid()
  if t and t.pid ~= pid then
    -- a forked child: the same user namespace can enter it
    if t.userns == userns_id() then t.pid = pid else t = nil end
  end
  if not t then
    t = make_template()
    template = t
  end
  return t
end

--- Make this process's template namespace now, not at its first scenario:
-- `mountns run` makes it once, before it forks the scripts' processes,
-- and each of them (root: the same user namespace) reuses it instead of
-- making its own; `ns:exec`'s copy of the host is then the runner's
-- namespace as the run started.
-- @raise "scenario: the template namespace: ..." when it cannot be made
function M.template()
  get_template()
end

-- The scenario child's set-up (isolate.spawn): a copy of the template and a
-- fresh tmpfs as its /. Returns the teardown, run after the result is sent.
local function enter_template()
  local t = template
  assert(core.pin_proc()) -- the caller's /proc: the template has none
  if t.user then assert(t.user:enter()) end
  assert(t.mnt:enter())
  t.mnt:close()
  if t.user then t.user:close() end
  assert(core.unshare { mount = true, propagation = "private" })
  assert(core.mount("mountns", "/root", "tmpfs", nil, "mode=0755"))
  assert(ops.pivot_root("/root"))
  return namespace.finish
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

-- No module file can be found from a scenario's / (a fresh tmpfs): a
-- require of a module not loaded yet would list the dozen paths it tried,
-- none of which exists there. The last searcher says what to do instead
-- (level 3: the caller of require, which calls the searchers).
local function no_loading()
  local searchers = package.searchers or package.loaders -- luacheck: ignore (5.1)
  searchers[#searchers + 1] = function(name)
    error(string.format("module '%s' cannot be loaded inside a scenario (its / is a "
      .. "fresh tmpfs, without the module files): require it before the scenario "
      .. "starts", name), 3)
  end
end

-- Runs in the isolated child; returns fn's results then the ending
-- (`driver.ending`: the picture and golden text `ask` asks for, and
-- --both's notes), nil when none. Last, not first: fn's results keep
-- their numbers in the error of one that cannot cross ("result #2 is a
-- function" for fn's second). `ask.both`: mirror every step on a model
-- (mountns.mirror; true, or the mirror's options) and fail at the first
-- difference. `ask.artifacts` (true: a failed scenario's; "all": every
-- one's): what it leaves behind (`mountns.artifacts.collect`) in the
-- ending as `artifacts`; a failure then crosses as a result (its message
-- `failed`, what it was `status`), since an error crosses as its message
-- alone.
local function run_inside(fn, opts, ask, ...)
  -- the set-up (one namespace: a copy of the template, its own tmpfs as /)
  -- was enter_template's; the host's tree stays reachable through the
  -- template's `host` handle (see "the template namespace" above)
  no_shell()
  no_loading()
  inside = {}
  local both = ask.both and mirror.new(opts.label,
    type(ask.both) == "table" and ask.both or nil)
  -- (until fn returns: the reads of the ending, the golden text and the
  -- picture, are mountns's, after the script)
  local listening = true
  local on_step = both and function(step, _, results)
    if listening then both:step(step, namespace.open_namespaces(), results) end
  end
  -- ns:exec runs host tools from the template's host namespace
  local first = namespace.begin(template.host, opts.label, on_step)
  local args = pack(...)
  local res = pack(xpcall(function() return fn(first, unpack(args, 1, args.n)) end,
    function(e)
      -- a failed assertion stays a failure, a skip a skip (isolate
      -- carries them across: mountns.verdict)
      if verdict.status_of(e) ~= "error" then return e end
      return isolate.traceback(tostring(e), "scenario")
    end))
  listening = false
  -- an inner scenario fails the outer one, even when its error was caught
  if res[1] and inside.nested then res = { false, inside.nested, n = 2 } end
  -- a --both difference fails the scenario, even when its error was caught;
  -- a failure, as a failed assertion is: its message names the step, no
  -- traceback of where the mirror raised
  if both and both.failed then res = { false, child.failure(both.failed), n = 2 } end
  local status = not res[1] and verdict.status_of(res[2])
  local saved = ask.artifacts and status ~= "skip" and (not res[1] or ask.artifacts == "all")
    and artifacts.collect(ask.title)
  -- the namespaces are closed by enter_template's teardown, after the
  -- result is sent
  if not res[1] and not saved then error(res[2], 0) end
  -- nothing asked for (outside `mountns run`): nil crosses as one byte,
  -- where a table takes mountns.child's table walker (its closures, its
  -- stacks) in the child and tables in the parent's decode
  local ended = driver.ending(ask, namespace.open_namespaces())
  local notes = both and both:note_lines()
  if notes and #notes > 0 then
    ended = ended or {}
    ended.notes = notes
  end
  if saved then
    ended = ended or {}
    ended.artifacts = saved
    if not res[1] then
      ended.failed, ended.status = tostring(res[2]), status
      return ended
    end
  end
  res.n = res.n + 1
  res[res.n] = ended
  return unpack(res, 2, res.n)
end

-- ---- the kernel backend of the scenario driver (mountns.driver) -----------
local kernel = { OPTIONS = { "timeout", "label" }, starts = true }

-- A scenario called inside a running one: this process is a scenario's
-- child, its state, its root and its namespaces are the outer
-- scenario's. Raised (and kept: it fails the outer one) naming the line
-- of the call, `level` as `error` counts it.
function kernel.enter(name, level)
  if not inside then return end
  local where = debug.getinfo(level, "Sl")
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

-- the child pivots to a fresh tmpfs, where no module file can be found:
-- every module deferred (mountns.lazy) is loaded here, once per process;
-- then the template namespace (its failure fails the scenario)
function kernel.prepare()
  lazy.load_all()
  get_template()
end

-- the child's results (fn's, then the ending: see run_inside) as the
-- driver takes them: true, the ending, fn's results; a failure that came
-- back with its artifacts: false, its message, the ending
local function reordered(ok, ...)
  if not ok then return false, ... end
  local res = pack(...)
  local ended = res[res.n]
  if type(ended) == "table" and ended.failed then return false, ended.failed, ended end
  return true, ended, unpack(res, 1, res.n - 1)
end

function kernel.run(fn, opts, ask, _, ...)
  return reordered(pcall(isolate.spawn, enter_template, { timeout = ask.timeout }, run_inside,
                         fn, opts, ask, ...))
end

--- Run a scenario.
-- @tparam[opt] string name shown by `mountns run`
-- @tparam function fn called as fn(ns, ...) with the first namespace
-- @tparam[opt] table opts `timeout` (seconds, default 60, or `mountns run
-- --timeout`), `label` of the first namespace
-- @return fn's results (nil, booleans, numbers, strings, tables)
function M.scenario(...)
  local run, backend = driver.running(), kernel
  if run and run.model then
    -- mountns run --model: the same scenario on the model; mountns.shell,
    -- once loaded, gives the model's namespaces their ns:shell
    lazy.load(shell)
    backend = model.backend
  end
  -- driver.scenario not in a tail call (its results are pass's
  -- arguments): its usage errors name the caller's line
  return pass(driver.scenario(backend, 2, ...))
end

-- the names of the options in run_problem's reasons: the functions'
local OPTION_NAMES = { model = "option 'model'", both = "option 'both'", linux = "option 'linux'" }

--- Why the run modes of `run_file`'s, `mountns.run`'s or `mountns run`'s
-- options do not go together, or nil: `linux` needs `model` (a kernel
-- scenario follows the running kernel), a `linux` the model has no rules
-- for (`model.linux_version`), `model` with `both`.
-- @tparam table opts `model`, `both`, `linux`
-- @tparam[opt] table names how the reason names each option (`{linux =
-- "--linux", ...}` for the command line; default "option 'linux'"...)
-- @treturn ?string the reason
function M.run_problem(opts, names)
  names = names or OPTION_NAMES
  if opts.linux ~= nil then
    if not opts.model then
      return names.linux .. " needs " .. names.model .. " (a kernel scenario follows the "
        .. "running kernel's rules; so do --both, check and explain)"
    end
    local v, why = model.linux_version(opts.linux)
    if not v then return names.linux .. ": " .. why end
  end
  if opts.model and opts.both then
    return names.model .. " and " .. names.both .. " exclude each other (" .. names.both
      .. " runs on the kernel and the model)"
  end
end

--- Check the `both` option of `run_file` and `mountns.run`: nil, true or
-- a table of the mirror's options (`mountns.mirror.new`: `override`,
-- `strict`, `locked_root`). Raises as a bad argument #2.
-- @param both the option's value
-- @tparam string fname the public name
-- @tparam[opt=1] int level
function M.check_both(both, fname, level)
  level = (level or 1) + 1
  if both == nil or both == true then return end
  if type(both) ~= "table" then
    argcheck.error(fname, 2, "option 'both': true or a table expected, got " .. type(both), level)
  end
  mirror.check_options(both, fname, 2, level, "both")
end

--- Check the run modes of `run_file`'s or `mountns.run`'s options (its
-- argument #2): `both` (`check_both`), then how `model`, `both` and
-- `linux` go together (`run_problem`). Raises as a bad argument #2.
-- @tparam table opts the options
-- @tparam string fname the public name
-- @tparam[opt=1] int level
function M.check_modes(opts, fname, level)
  level = (level or 1) + 1
  M.check_both(opts.both, fname, level)
  local problem = M.run_problem(opts)
  if problem then argcheck.error(fname, 2, problem, level) end
end

--- Run a script in this process the way `mountns run` does (its runner
-- calls this in a child of its own, one per script): every scenario the
-- script runs is reported to `opts.report` and, when it fails, returns nil
-- instead of raising, so the script's later scenarios still run.
-- @tparam string path the script
-- @tparam table opts `report`: called as report(name, ok, err, seconds,
-- dot, golden, notes, status, artifacts) after each scenario (`status`:
-- what ended it, one of `mountns.verdict.STATUSES`; `ok` is true for
-- "pass" only); `start`: called as
-- start(name, timeout) before each kernel scenario (its report follows);
-- `select`: called as select(index, name) when the script reaches a
-- `mountns.scenario` (index: its place in the file, from 1), before
-- anything of it runs: false skips it (not run, not reported; the call
-- returns nil), true runs it;
-- `dot`: pass each scenario's picture (Graphviz text of the namespaces
-- open at its end) as `dot`; `golden`:
-- pass the golden text of those namespaces (`mountns.format.golden_text`)
-- as `golden`; `timeout`: the default timeout of every scenario (seconds);
-- `model = true`: every `mountns.scenario` of the script runs on the model
-- (`mountns.model.scenario`: no fork, no namespaces); `linux` (with
-- `model`): the kernel version whose rules it follows (`mountns.model.new`;
-- default: the running kernel's);
-- `both`: every recorded step of every scenario is mirrored on a model
-- (`mountns.mirror`) and the open namespaces compared after it, the first
-- difference failing the scenario; report gets the mirror's notes (the
-- steps it could not follow, a list of lines, or nil) as `notes` (true, or
-- the mirror's options: `override`); `artifacts` (true: each failed kernel
-- scenario's, "all": every one's): report gets what it leaves behind
-- (`mountns.artifacts.collect`'s table) as `artifacts`
-- @treturn[1] boolean true: the script ran to its end
-- @return[2] nil
-- @treturn[2] string the script's error (loading it, or raised outside a
-- scenario)
-- @treturn[2] string what it was (`mountns.verdict.status_of`: "skip"
-- for `mountns.skip` outside a scenario, the rest of the file skipped)
function M.run_file(path, opts)
  argcheck.path(path, "run_file", 1, 2)
  opts = argcheck.options(opts, "run_file", 2,
    { "report", "start", "select", "dot", "golden", "timeout", "model", "both", "linux",
      "artifacts" }, 2)
  M.check_modes(opts, "run_file", 2)
  if opts.artifacts ~= nil and opts.artifacts ~= true and opts.artifacts ~= "all" then
    argcheck.error("run_file", 2, "option 'artifacts': true or \"all\" expected, got "
      .. tostring(opts.artifacts), 2)
  end
  if type(opts.report) ~= "function" then
    argcheck.error("run_file", 2, "option 'report': function expected, got "
      .. type(opts.report), 2)
  end
  for _, k in ipairs { "start", "select" } do
    if opts[k] ~= nil and type(opts[k]) ~= "function" then
      argcheck.error("run_file", 2, "option '" .. k .. "': function expected, got "
        .. type(opts[k]), 2)
    end
  end
  argcheck.seconds(opts.timeout, "run_file", 2, "option 'timeout'", 2)
  local chunk, err = loadfile(path)
  if not chunk then return nil, err end
  -- every scenario of the chunk, kernel or model, reports to opts.report
  local ok, e = driver.run_script(opts, chunk)
  if not ok then return nil, tostring(e), verdict.status_of(e) end
  return true
end

return M
