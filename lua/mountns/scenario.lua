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
local lazy = require "mountns.lazy" -- loaded on first use:
local dot = lazy.require "mountns.dot"
local format = require "mountns.format"
local model = lazy.require "mountns.model"
local mirror = lazy.require "mountns.mirror"
local shell = lazy.require "mountns.shell"

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
  local r, w = assert(core.pipe())
  local go_r, go_w = assert(core.pipe())
  local pid, ferr = child.fork(function()
    core.close_fd(r); core.close_fd(go_w)
    local ok, err = pcall(create, w, go_r)
    if not ok then pcall(child.send, w, "e", child.message(err)) end
    return ok and 0 or 1
  end)
  if not pid then
    for _, fd in ipairs { r, w, go_r, go_w } do core.close_fd(fd) end
    error("scenario: the template namespace: " .. ferr, 0)
  end
  core.close_fd(w); core.close_fd(go_r)
  local t, err = { pid = core.getpid(), userns = userns_id() }, nil
  local kind, body = child.receive(r, 30)
  if kind == "o" then
    t.host, err = core.namespace(pid)
    if t.host then
      core.write_fd(go_w, "1")
      kind, body = child.receive(r, 30)
    end
  end
  if kind == "o" and not err then
    t.mnt, err = core.namespace(pid)
    if t.mnt and euid ~= 0 then t.user, err = core.namespace(pid, "user") end
  end
  core.close_fd(go_w); core.close_fd(r)
  if kind ~= "o" then core.kill(pid, "KILL") end
  core.waitpid(pid)
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

-- Runs in the isolated child; returns fn's results then what `ending`
-- asks for at the end ({dot = the picture, golden = the golden text, notes
-- = --both's notes}: `ending.dot` is the picture's title, `ending.golden`
-- true). Last, not first: fn's results keep their numbers in the error
-- of one that cannot cross ("result #2 is a function" for fn's second).
-- `ending.both`: mirror every step on a model (mountns.mirror; true, or
-- the mirror's options) and fail at the first difference.
local function run_inside(fn, opts, ending, ...)
  -- the set-up (one namespace: a copy of the template, its own tmpfs as /)
  -- was enter_template's; the host's tree stays reachable through the
  -- template's `host` handle (see "the template namespace" above)
  no_shell()
  no_loading()
  inside = {}
  local both = ending.both and mirror.new(opts.label,
    type(ending.both) == "table" and ending.both or nil)
  local on_step = both and function(step)
    both:step(step, namespace.open_namespaces())
  end
  -- ns:exec runs host tools from the template's host namespace
  local first = namespace.begin(template.host, opts.label, on_step)
  local args = pack(...)
  local res = pack(xpcall(function() return fn(first, unpack(args, 1, args.n)) end,
    function(e)
      -- a failed assertion stays a failure (isolate carries it across)
      if child.is_failure(e) then return e end
      return isolate.traceback(tostring(e), "scenario")
    end))
  -- an inner scenario fails the outer one, even when its error was caught
  if res[1] and inside.nested then res = { false, inside.nested, n = 2 } end
  -- a --both difference fails the scenario, even when its error was caught;
  -- a failure, as a failed assertion is: its message names the step, no
  -- traceback of where the mirror raised
  if both and both.failed then res = { false, child.failure(both.failed), n = 2 } end
  local notes = both and both:note_lines()
  local ended = { dot = ending.dot and picture(ending.dot) or nil,
                  golden = ending.golden and golden() or nil,
                  notes = notes and #notes > 0 and notes or nil }
  -- nothing asked for (outside `mountns run`): nil crosses as one byte,
  -- where a table takes mountns.child's table walker (its closures, its
  -- stacks) in the child and tables in the parent's decode
  if next(ended) == nil then ended = nil end
  -- the namespaces are closed by enter_template's teardown, after the
  -- result is sent
  if not res[1] then error(res[2], 0) end
  res.n = res.n + 1
  res[res.n] = ended
  return unpack(res, 2, res.n)
end

-- The options of `run_file` while a script runs under `mountns run` (in
-- the runner's child for that script), else nil; `count`: the scenarios
-- the script has reached so far (their index in the file).
local running
local count = 0

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
  elseif name ~= nil then
    -- a report prints it (a table would print as its address, or a mount
    -- table as its rows)
    argcheck.typed(name, "string", "scenario", 1, 2)
  end
  argcheck.typed(fn, "function", "scenario", argn - 1, 2)
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
  local run = running
  -- under `mountns run`: the scenario's place in its file, and whether the
  -- run selected it (--filter, --shard, --list): one not selected is not
  -- run at all (no process, no namespace), only counted
  if run and run.select then
    count = count + 1
    if not run.select(count, name or "(unnamed scenario)") then return nil end
  end
  if run and run.model then
    -- mountns run --model: the same scenario on the model (it checks the
    -- options and reports to run_file's report); mountns.shell, once
    -- loaded, gives the model's namespaces their ns:shell
    lazy.load(shell)
    if name == nil then return model.scenario(fn, opts, ...) end
    return model.scenario(name, fn, opts, ...)
  end
  opts = argcheck.options(opts, "scenario", argn, { "timeout", "label" }, 2)
  argcheck.seconds(opts.timeout, "scenario", argn, "option 'timeout'", 2)
  local t0 = core.clock()
  local title = name or "(unnamed scenario)"
  -- the child pivots to a fresh tmpfs, where no module file can be found:
  -- every module deferred (mountns.lazy) is loaded here, once per process
  lazy.load_all()
  local timeout = opts.timeout or (run and run.timeout) or isolate.DEFAULT_TIMEOUT
  local res = pack(pcall(get_template))
  if res[1] then
    -- under mountns run: the runner learns that the scenario's process
    -- starts, and bounds it too (report closes it)
    if run and run.start then run.start(title, timeout) end
    res = pack(pcall(isolate.spawn, enter_template, { timeout = timeout },
                     run_inside, fn, opts, { dot = run and run.dot and title or nil,
                                             golden = run and run.golden or nil,
                                             both = run and run.both or nil }, ...))
  end
  if run then
    local ended = res[1] and res[res.n] or {}
    run.report(title, res[1], not res[1] and res[2] or nil, core.clock() - t0,
               ended.dot, ended.golden, ended.notes)
    if not res[1] then return nil end
  elseif not res[1] then
    error(res[2], 0)
  end
  return unpack(res, 2, res.n - 1)
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
-- dot, golden, notes) after each scenario; `start`: called as
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
-- the mirror's options: `override`)
-- @treturn[1] boolean true: the script ran to its end
-- @return[2] nil
-- @treturn[2] string the script's error (loading it, or raised outside a
-- scenario)
function M.run_file(path, opts)
  argcheck.path(path, "run_file", 1, 2)
  opts = argcheck.options(opts, "run_file", 2,
    { "report", "start", "select", "dot", "golden", "timeout", "model", "both", "linux" }, 2)
  M.check_modes(opts, "run_file", 2)
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
  local saved, saved_count = running, count
  running, count = opts, 0
  -- model.scenario reports to the same report (mountns.model)
  model.set_running(opts, dot.dot)
  local ok, e = pcall(chunk)
  running, count = saved, saved_count
  model.set_running(saved, dot.dot)
  if not ok then return nil, tostring(e) end
  return true
end

return M
