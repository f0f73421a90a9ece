--- Scenarios: several mount namespaces described in one Lua function.
-- `mountns.scenario([name,] fn, opts)` runs `fn(ns)` in an isolated child
-- whose `/` is a brand-new tmpfs (pivot_root), so a script can use the
-- seed article's absolute paths (`/X`, `/Y`, `/Z`) verbatim and
-- `ns:mounts()` shows only what the script mounted. `ns` is the first
-- namespace (the article's `sh1`); `ns:unshare()` makes more.
-- @module mountns.scenario

local core = require "mountns.core"
local mtable = require "mountns.table"
local isolate = require "mountns.isolate"
local agent = require "mountns.agent"
local argcheck = require "mountns.args"
local child = require "mountns.child"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

--- The namespace class. Every method acts inside its namespace and raises
-- the core's message ("bind /X /Z: No such file or directory (ENOENT)")
-- on failure.
-- @type Namespace
local Namespace = {}
Namespace.__index = Namespace
M.Namespace = Namespace

local function is_ns(v)
  return getmetatable(v) == Namespace
end
M.is_namespace = is_ns

-- Scenario state, one per scenario process: the namespaces and which one
-- the process is in now (setns is skipped when it already is there).
local state

-- The first line of every method: self is a namespace of this class (a
-- call with a dot, ns.mkdir(p), passes p as self) and it is open. Raised at
-- the method's caller (level 3: this function, the method, its caller).
local function check_open(ns, name)
  if not is_ns(ns) then
    error(string.format("calling 'ns:%s' on bad self (scenario namespace expected, "
      .. "got %s): call it with a colon, ns:%s(...)", name, type(ns), name), 3)
  end
  if ns.closed then
    error(string.format("attempt to use closed namespace %s (ns:%s)", tostring(ns), name), 3)
  end
end

-- A raised error of an operation run for method `name` (the core raises
-- only on misuse): its "bad argument #N to 'mount'" names the method
-- ("ns:mount") instead of the core function (or '?' through an agent), its
-- position inside mountns is dropped, and it is raised at the method's
-- caller (level 4: this function, check_results, the method, its caller).
local function raise_for(name, e)
  if type(e) == "string" then
    local n, why = e:match("bad argument #(%d+) to '[^']*' %((.*)%)$")
    if n then argcheck.error("ns:" .. name, tonumber(n), why, 4) end
  end
  error(e, 4)
end

local function pack(...)
  return { n = select("#", ...), ... }
end

-- Enter ns if the process is not in it yet.
local function switch_to(ns)
  if state.current ~= ns then
    local ok, err = ns.nsfd:enter()
    if not ok then error(err, 0) end
    state.current = ns
  end
end

--- Call fn(...) inside this namespace; the process returns to the
-- namespace it was in before, also when fn raises.
function Namespace:run(fn, ...)
  check_open(self, "run")
  if type(fn) ~= "function" then
    argcheck.error("ns:run", 1, "function expected, got " .. type(fn), 2)
  end
  local back = state.current
  switch_to(self)
  local res = pack(pcall(fn, ...))
  if back and not back.closed then switch_to(back) end
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

-- Run agent.ops[op](...) for ns: through its agent when ns belongs to a
-- user namespace the scenario created (only a process inside that user
-- namespace acts as its owner), else in this process after setns.
-- The method checked ns first (check_open). Returns pcall's results:
-- false and the error the operation raised, or true and its results.
local function exec(ns, op, ...)
  if ns.agent then return pcall(ns.agent.call, ns.agent, ns.serial, op, ...) end
  local back = state.current
  switch_to(ns)
  local res = pack(pcall(agent.ops[op], ...))
  if back and not back.closed then switch_to(back) end
  return unpack(res, 1, res.n)
end

-- exec's results (pcall's) for the method `name` that called it: a raised
-- error, or the core's returned message, is raised at the method's caller
-- (level 3: check_results, method, caller); else the results, packed.
-- (never call it in a tail position: a tail call would drop the method's
-- frame and shift the level)
local function check_results(name, ok, ...)
  if not ok then raise_for(name, (...)) end
  local res = pack(...)
  if res[1] == nil and res[2] then error(res[2], 3) end
  return res
end

-- A method that runs one core call inside the namespace.
local function method(fname)
  return function(self, ...)
    check_open(self, fname)
    local res = check_results(fname, exec(self, "call", fname, ...))
    return unpack(res, 1, res.n)
  end
end

for _, f in ipairs { "mount", "umount", "bind", "move", "remount",
                     "make_shared", "make_private", "make_slave",
                     "make_unbindable", "chdir", "symlink" } do
  Namespace[f] = method(f)
end

-- The new mount API (mountns.open_tree, move_mount, fsmount, mount_setattr)
-- as methods: paths resolve in this namespace. A mount fd is a userdata of
-- this process, so in a namespace run by an agent (a user namespace the
-- scenario created) these raise: use ns:run there.
for _, f in ipairs { "open_tree", "move_mount", "fsmount", "mount_setattr" } do
  Namespace[f] = function(self, ...)
    check_open(self, f)
    if self.agent then
      error(f .. ": not available in a namespace of another user namespace "
        .. "(its mount fds cannot cross processes); use ns:run", 2)
    end
    local res = check_results(f, exec(self, "call", f, ...))
    return unpack(res, 1, res.n)
  end
end

--- mkdir -p inside the namespace.
function Namespace:mkdir(path, opts)
  check_open(self, "mkdir")
  local o = { parents = true }
  for k, v in pairs(argcheck.options(opts, "ns:mkdir", 2, { "parents", "mode" }, 2)) do
    o[k] = v
  end
  local res = check_results("mkdir", exec(self, "call", "mkdir", path, o))
  return unpack(res, 1, res.n)
end

--- pivot_root into new_root (a mount point in this namespace) and detach
-- the old root, as container runtimes do.
function Namespace:pivot_root(new_root)
  check_open(self, "pivot_root")
  argcheck.path(new_root, "ns:pivot_root", 1, 2)
  local res = check_results("pivot_root", exec(self, "pivot_root", new_root))
  return unpack(res, 1, res.n)
end

--- Whether the mount at path is locked in this namespace (a less privileged
-- namespace locks what it inherited). Found in a throw-away copy of the
-- namespace, so this one is not changed. Raises if path is not a mount.
function Namespace:locked(path)
  check_open(self, "locked")
  argcheck.path(path, "ns:locked", 1, 2)
  local res = check_results("locked", exec(self, "locked", path))
  return unpack(res, 1, res.n)
end

local function new_namespace(handle, label, ag)
  state.count = state.count + 1
  local ns = setmetatable({ nsfd = handle, label_ = label or ("ns" .. state.count),
                            serial = state.count, agent = ag, closed = false },
                          Namespace)
  state.namespaces[#state.namespaces + 1] = ns
  return ns
end

-- unshare's propagation values (core.unshare's, as unshare(1) has them)
local PROPAGATIONS = { private = true, shared = true, slave = true, unchanged = true }

--- A new namespace, a copy of this one (unshare -m).
-- @tparam[opt] table opts `propagation`: "private" (default, as unshare(1)),
-- "shared", "slave" or "unchanged"; `label`; `user = true`: the new mount
-- namespace is owned by a new user namespace (the caller mapped to root
-- inside), so the kernel's rules for less privileged copies apply. Later
-- unshares from it stay in that user namespace unless `user` is asked again.
-- @treturn Namespace
function Namespace:unshare(opts)
  check_open(self, "unshare")
  opts = argcheck.options(opts, "ns:unshare", 1, { "propagation", "label", "user" }, 2)
  local prop = opts.propagation or "private"
  if not PROPAGATIONS[prop] then
    argcheck.error("ns:unshare", 1, string.format("option 'propagation': invalid value '%s' "
      .. "(private, shared, slave or unchanged)", tostring(prop)), 2)
  end
  if opts.user ~= nil and type(opts.user) ~= "boolean" then
    argcheck.error("ns:unshare", 1, "option 'user' must be a boolean, got " .. type(opts.user), 2)
  end
  local serial = state.count + 1
  local ag = self.agent
  if opts.user then
    local userns = ag and assert(core.namespace(ag.pid, "user"))
    local err
    ag, err = agent.start(self.nsfd, userns, prop, serial)
    if userns then userns:close() end
    if not ag then error(err, 2) end
    state.agents[#state.agents + 1] = ag
  elseif ag then
    check_results("unshare", pcall(ag.call, ag, self.serial, "unshare", prop, serial))
  end
  local handle, err
  if ag then
    handle, err = core.namespace(ag.pid) -- the agent is in the new one now
  else
    local back = state.current
    switch_to(self)
    local ok
    ok, err = core.unshare { mount = true, propagation = prop }
    if ok then handle, err = core.namespace() end
    -- back to where the process was: this namespace stays alive through
    -- its handle, the new one through the new handle
    state.current = nil
    switch_to(back or self)
  end
  if not handle then error(err, 2) end
  return new_namespace(handle, opts.label, ag)
end

--- Run a shell transcript in this namespace: `mountns.shell(ns, text, opts)`.
function Namespace:shell(text, opts)
  local out, names, steps = require("mountns.shell").method(self, text, opts) -- lazy: no circle
  return out, names, steps
end

--- The user namespace that owns this mount namespace, as a core handle
-- (for idmapped mounts); close it when done.
function Namespace:userns()
  check_open(self, "userns")
  return assert(core.namespace(self.agent and self.agent.pid or nil, "user"))
end

--- The mount table of this namespace.
function Namespace:mounts(opts)
  check_open(self, "mounts")
  argcheck.options(opts, "ns:mounts", 1, { "propagate_from" }, 2)
  local fast = package.loaded["mountns.mounts"]
  if fast and fast.mounts then return fast.mounts(self, opts) end
  return self:run(function()
    local t, err = core.mountinfo()
    if not t then error(err, 0) end
    return mtable.new(t)
  end)
end

-- statmount(2) of the mount a path is on: a few microseconds at any table
-- size, where reading the whole table costs milliseconds. Only the top
-- mount of a path that lookup reaches: else nil, and find asks the table.
local function statmount_at(path)
  local r = core.statmount(path)
  -- a path that is not itself a mount point is on its parent's mount
  if r and r.target == path then return r end
  return nil
end

--- The topmost mount at path in this namespace, or nil: what
-- `ns:mounts():find(path)` answers (see `mountns.table`), also for a mount
-- hidden under an over-mount. `path` is normalised lexically (`/S/`,
-- `//S` and `/./S` are `/S`). Uses statmount(2) where the kernel gives
-- complete records (Linux 6.13+) and the path reaches the mount, else the
-- whole mount table.
function Namespace:find(path)
  check_open(self, "find")
  path = mtable.normpath(path, "ns:find", 1, 2)
  -- statmount_complete: the kernel gives every field of a record (Linux
  -- 6.12's statmount has no source and no fs subtype). Not the record's
  -- own mask: the kernel leaves a field's bit clear when its text is empty
  -- (no subtype, no fs options), so the mask cannot tell missing from empty.
  local f = core.features()
  if f.statmount_complete and f.statx_unique_id then
    local r = self:run(statmount_at, path)
    if r then return r end
  end
  return self:mounts():find(path)
end

--- The namespace's ID (the inode number lsns shows).
function Namespace:id()
  check_open(self, "id")
  return self.nsfd:id()
end

--- The core namespace handle (an nsfs fd).
function Namespace:handle()
  check_open(self, "handle")
  return self.nsfd
end

--- Get or set the label used in diagnostics and pictures ("sh1").
function Namespace:label(name)
  if not is_ns(self) then check_open(self, "label") end
  if name ~= nil then
    self.label_ = tostring(name)
    return self
  end
  return self.label_
end

--- The PID of a process living in this namespace (started on first use),
-- so outside tools can look in: `findmnt -N PID`, `/proc/PID/mountinfo`.
function Namespace:pid()
  check_open(self, "pid")
  if self.pid_ then return self.pid_ end
  local r, w = assert(core.pipe())
  local ready_r, ready_w = assert(core.pipe())
  -- the helper: enter the namespace, say so, then wait until the
  -- scenario closes the pipe or dies (PR_SET_PDEATHSIG kills it then too)
  local pid = assert(child.fork(function()
    core.close_fd(w); core.close_fd(ready_r)
    local ok, err = self.nsfd:enter()
    -- the scenario's namespace fds would keep those namespaces alive
    -- after ns:close(): the helper holds none
    core.close_namespaces()
    core.write_fd(ready_w, ok and "ok" or err)
    core.close_fd(ready_w)
    core.read_all(r)
  end))
  core.close_fd(r); core.close_fd(ready_w)
  local status = core.read_all(ready_r)
  core.close_fd(ready_r)
  self.pid_, self.pid_fd = pid, w
  if status ~= "ok" then
    self:close_pid()
    error("pid: " .. tostring(status), 2)
  end
  return pid
end

--- Run a host tool that looks at this namespace: `ns:exec{"findmnt", "-o",
-- "TARGET,PROPAGATION"}`, `ns:exec{"cat", "/proc/self/mountinfo"}`.
-- The tool runs on the host's files (its `/`, `PATH` and libraries are the
-- host's: a scenario's own `/` is a bare tmpfs) and sees this namespace
-- through `/proc/self`: in a throw-away private copy of the isolate's
-- namespace, the mount files of `/proc/self` (the tool's own PID) are
-- covered by bind mounts of those of `/proc/PID` of `ns:pid()`, so
-- `/proc/self/mountinfo` and `/proc/mounts` are this namespace's, as its
-- own processes see them.
-- A process that is not the tool itself (a child of a shell) has its own
-- `/proc/self`: pass `/proc/PID` of `ns:pid()` there.
-- @tparam table argv the program (looked up in the host's `PATH`) and its
-- arguments, strings
-- @tparam[opt] table opts `timeout` in seconds (default 60)
-- @treturn table `{code = exit status (nil if killed), signal = "SIGSEGV"
-- (nil if not killed), stdout = "...", stderr = "..."}`; a tool that
-- cannot be run (not found) raises
function Namespace:exec(argv, opts)
  check_open(self, "exec")
  if type(argv) ~= "table" or type(argv[1]) ~= "string" then
    argcheck.error("ns:exec", 1, "a table {program, args...} expected, got "
      .. (type(argv) == "table" and "a table without a program name" or type(argv)), 2)
  end
  for i = 1, #argv do
    if type(argv[i]) ~= "string" then
      argcheck.error("ns:exec", 1, "argv[" .. i .. "]: string expected, got "
        .. type(argv[i]), 2)
    end
    if argv[i]:find("\0", 1, true) then
      argcheck.error("ns:exec", 1, "argv[" .. i .. "]: embedded NUL byte", 2)
    end
  end
  opts = argcheck.options(opts, "ns:exec", 2, { "timeout" }, 2)
  local timeout = argcheck.seconds(opts.timeout, "ns:exec", 2, "option 'timeout'", 2)
    or 60
  local host = state.host
  if not host then error("ns:exec: the isolate's namespace is gone", 2) end
  local helper = self:pid()
  local out_r, out_w = assert(core.pipe())
  local err_r, err_w = assert(core.pipe())
  local in_r, in_w = assert(core.pipe())
  local st_r, st_w = assert(core.pipe())
  local pid, ferr = child.fork(function()
    local _, e = pcall(function()
      core.close_fd(out_r); core.close_fd(err_r); core.close_fd(in_w)
      core.close_fd(st_r)
      core.close_namespaces(host)
      local function try(ok, err)
        if not ok then error(err, 0) end
      end
      -- the isolate's namespace (/ is the host's tree), then a private
      -- copy of it, so the bind mounts stay in this process
      try(host:enter())
      host:close()
      try(core.unshare { mount = true, propagation = "private" })
      -- the mount files only: the rest of /proc/self (maps, fd, exe) must
      -- stay the tool's own (the loader and sanitizers read them)
      local me = core.getpid()
      for _, f in ipairs { "mountinfo", "mounts", "mountstats",
                           "task/%d/mountinfo", "task/%d/mounts" } do
        try(core.bind("/proc/" .. helper .. "/" .. f:format(helper),
                      "/proc/" .. me .. "/" .. f:format(me)))
      end
      local _, err = core.execvp(argv, { stdin = in_r, stdout = out_w, stderr = err_w })
      error(err, 0)
    end)
    -- only reached when the tool could not be run (st_w closes on exec)
    core.write_fd(st_w, tostring(e))
    return 127
  end)
  if not pid then
    for _, fd in ipairs { out_r, out_w, err_r, err_w, in_r, in_w, st_r, st_w } do
      core.close_fd(fd)
    end
    error("ns:exec: " .. ferr, 2)
  end
  for _, fd in ipairs { out_w, err_w, in_r, in_w, st_w } do core.close_fd(fd) end
  local stdout, stderr, so_far_out, so_far_err = core.read_outputs(out_r, err_r, timeout)
  core.close_fd(out_r); core.close_fd(err_r)
  local failed = core.read_all(st_r)
  core.close_fd(st_r)
  if not stdout and stderr == "timeout" then
    core.kill(pid, "KILL")
    core.waitpid(pid)
    error(string.format("ns:exec: %s ran past its timeout of %g s and was "
      .. "killed (output so far: %q %q)", argv[1], timeout, so_far_out,
      so_far_err), 2)
  end
  local how, code = core.waitpid(pid)
  if failed and failed ~= "" then error("ns:exec: " .. failed, 2) end
  return { code = how == "exited" and code or nil,
           signal = how == "killed" and code or nil,
           stdout = stdout, stderr = stderr }
end

-- End the helper process of ns:pid(), if any, and reap it.
function Namespace:close_pid()
  if self.pid_ then
    core.close_fd(self.pid_fd)
    core.kill(self.pid_, "KILL")
    core.waitpid(self.pid_)
    self.pid_ = nil
  end
end

--- Tear the namespace down, as when its last process exits: its mounts
-- leave their peer groups. Idempotent.
function Namespace:close()
  if is_ns(self) and self.closed then return end
  check_open(self, "close")
  self:close_pid()
  if state and state.current == self then
    -- cannot stay in a namespace that is being torn down: go to another
    for _, o in ipairs(state.namespaces) do
      if o ~= self and not o.closed then switch_to(o); break end
    end
  end
  self.nsfd:close()
  if self.agent and not self.agent.stopped then
    pcall(self.agent.close_ns, self.agent, self.serial)
  end
  self.closed = true
end

function Namespace:__tostring()
  local id = self.closed and "closed" or self.nsfd:id()
  return string.format("%s mnt:[%s]", self.label_, id)
end

Namespace.__eq = function(a, b)
  return rawequal(a, b) or (not a.closed and not b.closed and a:id() == b:id())
end

--- Peer groups across namespaces.
-- @treturn table peer group ID -> list of {ns = ns, target = path, id = mount ID}
function M.peer_groups(...)
  local groups = {}
  for i = 1, select("#", ...) do
    local ns = select(i, ...)
    for _, m in ipairs(ns:mounts()) do
      if m.shared then
        local g = groups[m.shared]
        if not g then g = {}; groups[m.shared] = g end
        g[#g + 1] = { ns = ns, target = m.target, id = m.id }
      end
    end
  end
  return groups
end

-- ---- scenario set-up inside the isolated child --------------------------

-- pivot_root into a fresh tmpfs so the scenario sees only its own mounts.
local function make_root()
  assert(core.pin_proc()) -- /proc is gone after the pivot: keep an O_PATH fd
  assert(core.mount("mountns", "/tmp", "tmpfs", nil, "mode=0755"))
  assert(agent.ops.pivot_root("/tmp"))
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
  local open = {}
  for _, ns in ipairs(state.namespaces) do
    if not ns.closed then open[#open + 1] = ns end
  end
  open[#open + 1] = { normalize = true, title = title }
  local ok, text = pcall(require("mountns.dot").dot, unpack(open))
  return ok and text or false
end

-- Runs in the isolated child; returns the picture (or false) then fn's results.
local function run_inside(fn, opts, dot_title, ...)
  -- the isolate's namespace still has the host's tree (/bin, /proc): ns:exec
  -- runs host tools from it, so the scenario keeps it (and this is why a
  -- scenario unshares a second namespace rather than pivoting in this one)
  local host = assert(core.namespace())
  isolate.private_namespace()
  make_root()
  no_shell()
  state = { namespaces = {}, count = 0, agents = {}, host = host }
  local first = new_namespace(assert(core.namespace()), opts.label)
  state.current = first
  local args = pack(...)
  local res = pack(xpcall(function() return fn(first, unpack(args, 1, args.n)) end,
    function(e)
      -- a failed assertion stays a failure (isolate carries it across)
      if child.is_failure(e) then return e end
      return isolate.traceback(tostring(e), "scenario")
    end))
  -- an inner scenario fails the outer one, even when its error was caught
  if res[1] and state.nested then res = { false, state.nested, n = 2 } end
  local dot = dot_title and picture(dot_title) or false
  for i = #state.namespaces, 1, -1 do pcall(Namespace.close, state.namespaces[i]) end
  for _, ag in ipairs(state.agents) do ag:stop() end
  if not res[1] then error(res[2], 0) end
  return dot, unpack(res, 2, res.n)
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
  if state then
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
    state.nested = state.nested or msg
    error(msg, 0)
  end
  opts = argcheck.options(opts, "scenario", argn, { "timeout", "label" }, 2)
  argcheck.seconds(opts.timeout, "scenario", argn, "option 'timeout'", 2)
  local run = running
  local t0 = core.clock()
  local title = name or "(unnamed scenario)"
  local res = pack(pcall(isolate.isolate_with,
                         { timeout = opts.timeout or (run and run.timeout) },
                         run_inside, fn, opts, run and run.dot and title, ...))
  if run then
    run.report(title, res[1], not res[1] and res[2] or nil, core.clock() - t0,
               res[1] and res[2] or nil)
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
-- dot) after each scenario; `dot`: pass each scenario's picture (Graphviz
-- text of the namespaces open at its end) as `dot`; `timeout`: the
-- default timeout of every scenario (seconds)
-- @treturn[1] boolean true: the script ran to its end
-- @return[2] nil
-- @treturn[2] string the script's error (loading it, or raised outside a
-- scenario)
function M.run_file(path, opts)
  argcheck.path(path, "run_file", 1, 2)
  opts = argcheck.options(opts, "run_file", 2, { "report", "dot", "timeout" }, 2)
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
