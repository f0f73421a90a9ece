--- Namespace: the class of a scenario's mount namespaces.
-- `mountns.scenario` hands its function the first namespace (the seed
-- article's `sh1`); `ns:unshare()` makes more. Every method acts inside its
-- namespace: the scenario process enters it (setns), or, for a namespace
-- of a user namespace the scenario created, that user namespace's agent
-- (`mountns.agent`) acts there. The operations themselves are
-- `mountns.ops`.
--
-- The namespaces of one scenario share a state, one per scenario process
-- (`begin` makes it, `finish` closes what is left): the namespaces, which
-- one the process is in now (setns is skipped when it already is there),
-- the agents, and the isolate's namespace that `ns:exec` runs host tools
-- from.
-- @module mountns.namespace

local core = require "mountns.core"
local mtable = require "mountns.table"
local argcheck = require "mountns.args"
local child = require "mountns.child"
local ops = require "mountns.ops"
local tool = require "mountns.tool"
local lazy = require "mountns.lazy" -- loaded on first use:
local agent = lazy.require "mountns.agent"
local mounts = lazy.require "mountns.mounts"
local watch = lazy.require "mountns.watch"
local shell = lazy.require "mountns.shell"
local model = lazy.require "mountns.model"

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

--- Whether v is a scenario namespace.
-- @return boolean
M.is_namespace = is_ns

-- The scenario state, one per scenario process (see the top of the file).
local state

-- The first line of every method: self is a namespace of this class (a
-- call with a dot, ns.mkdir(p), passes p as self) and it is open. Raised at
-- the method's caller (level 3: this function, the method, its caller).
local function check_open(ns, name)
  argcheck.self(ns, is_ns(ns), name, 3)
end

-- A raised error of an operation run for method `name` (the core raises
-- only on misuse): its "bad argument #N to 'mount'" names the method
-- ("ns:mount") instead of the core function (or '?' through an agent), its
-- position inside mountns is dropped, and it is raised at the method's
-- caller (level 4: this function, checked, the method, its caller; or
-- `level` when called from elsewhere).
local function raise_for(name, e, level)
  level = level or 4
  if type(e) == "string" then
    local n, why = e:match("bad argument #(%d+) to '[^']*' %((.*)%)$")
    if n then argcheck.error("ns:" .. name, tonumber(n), why, level) end
  end
  error(e, level)
end

local function pack(...)
  return { n = select("#", ...), ... }
end

-- The namespace's handle (an nsfs fd). The first namespace's is opened
-- on first use, not when the scenario begins: a scenario that never leaves
-- its first namespace never needs it (an open of /proc/self/ns/mnt, a new
-- nsfs inode, and its close). Until then the process is in that
-- namespace: a second namespace is made only by ns:unshare, which opens
-- the handle of the namespace it copies first (both forms: the process's
-- own unshare, and an agent's, which enters it by that handle).
local function handle_of(ns)
  local h = ns.nsfd
  if not h then
    h = assert(core.namespace())
    ns.nsfd = h
  end
  return h
end

-- Enter ns if the process is not in it yet.
local function switch_to(ns)
  if state.current ~= ns then
    local ok, err = handle_of(ns):enter()
    if not ok then error(err, 0) end
    state.current = ns
  end
end

-- pcall(fn, ...)'s results with the process in ns's mount namespace, and
-- back in the one it was in after, also when fn raises (unless that one
-- was closed meanwhile): the one switch-and-restore of ns:run, ns:find and
-- the methods' operations. (Varargs, not a table: ns:find packs nothing.)
local function back_to(back, ...)
  if back and not back.closed then switch_to(back) end
  return ...
end
local function pcall_in(ns, fn, ...)
  local back = state.current
  if back == ns then return pcall(fn, ...) end
  switch_to(ns)
  return back_to(back, pcall(fn, ...))
end

-- ---- the step recorder ----------------------------------------------------
-- Every call that may change a namespace (mkdir, write, mount, umount,
-- bind, move, remount, make_*, chdir, symlink, pivot_root, the new mount
-- API, unshare, close, and run and exec, whose code mountns cannot see;
-- not the ns:run calls mountns makes itself, which only read) appends a
-- step to the scenario's state, in call order:
-- `{ns = serial, op = "bind", args = {n = 2, "/X", "/Z"} (copied), ok =
-- true|false, errno = "ENOENT"|nil, error = message|nil, new = serial of the
-- namespace unshare made and label = its label, where = "examples/article.lua:19" (the first
-- caller outside mountns), via = "recipes.lua:57" (the mountns module that
-- made the call for it, if any)}`; `ns:label(name)` appends `{op = "label"}`
-- so a replay names namespaces as the scenario did. `mountns.model.replay`
-- replays them, `mountns.explain` explains from them, `mountns run --both`
-- mirrors each on a model as it happens (the `on_step` of `begin`, told
-- the reads too: `heard`). A
-- step costs a table, a copy of its arguments and a walk of the stack:
-- about a microsecond, against the milliseconds of a scenario.

-- lua/mountns/ as debug.getinfo names its files: a frame there is mountns's
local HERE = debug.getinfo(1, "S").source:match("^(@.*/)[^/]*$") or "@?"

-- A deep copy of an argument (tables copied, cycles kept, the rest as is:
-- a mount fd handle stays the same userdata).
local function copy(v, seen)
  if type(v) ~= "table" then return v end
  seen = seen or {}
  if seen[v] then return seen[v] end
  local c = {}
  seen[v] = c
  for k, x in pairs(v) do c[copy(k, seen)] = copy(x, seen) end
  return c
end

-- What the stack walk needs of a function: whether it is mountns's, and
-- how to name its file ({mine, short_src, its source: "@.../mountns/x.lua"}),
-- cached by function (debug.getinfo's "S" costs a microsecond a call).
-- The strings of a step are made once, at its end: each new string is
-- written into the string table a scenario's child shares with its
-- parent (a copy-on-write fault, for a few of them).
local sources = setmetatable({}, { __mode = "k" })
local function source_of(f)
  local s = sources[f]
  if not s then
    local info = debug.getinfo(f, "S")
    s = { info.source:find(HERE, 1, true) == 1, info.short_src, info.source }
    sources[f] = s
  end
  return s
end

-- The step's place: the first frame from `level` up (as debug.getinfo
-- counts from this function) that is not in mountns (the user's line), and
-- the mountns frame just below it when the call came through mountns (a
-- recipe, a shell transcript).
local function caller(level)
  local via, via_line
  for l = level, level + 60 do
    local info = debug.getinfo(l, "fl")
    if not info then break end
    if info.currentline > 0 then
      local s = source_of(info.func)
      if not s[1] then
        return string.format("%s:%d", s[2], info.currentline),
          via and string.format("%s:%d", via[3]:sub(#HERE + 1), via_line)
      end
      via, via_line = s, info.currentline
    end
  end
  return "?", via and string.format("%s:%d", via[3]:sub(#HERE + 1), via_line)
end

-- The errno name at the end of a failure's message ("... (ENOENT)").
local function errno_of(msg)
  return tostring(msg):match(".*%((E[%u%d]+)%)")
end

-- Append a step for ns's method `op` called with args (a fresh pack of
-- them, kept in the step); r: pcall's
-- results of the operation (packed), new: the namespace unshare made.
-- level: the method's caller, as `error` counts from record's caller (2
-- when the method calls record); fn: the function ns:run ran. Returns the
-- step, or nil for an ns:run of mountns's own (see below).
local WEAK = { __mode = "v" }

-- Tell the mirror listening (`begin`'s on_step) of a step and its call's
-- results r, marked `within` inside a script's ns:run (the code around it
-- is in no step); not while it is told one (it reads the kernel's tables).
local function tell(step, ns, r)
  if state.within and state.within > 0 then step.within = "run" end
  state.telling = true
  local ok, e = pcall(state.on_step, step, ns, r)
  state.telling = false
  if not ok then error(e, 0) end
end

-- Whether a mirror listens now (and is not being told a step).
local function listening()
  return state and state.on_step and not state.telling
end

-- The step of ns's call op with args (the method's own pack, kept: its
-- tables are copied) and pcall's results r (packed): a raised error, or
-- nil and a message (the core's refusal), is a failure, with the errno
-- name its message ends in.
local function new_step(ns, op, args, r)
  for i = 1, args.n do
    if type(args[i]) == "table" then args[i] = copy(args[i]) end
  end
  local step = { ns = ns.serial, op = op, args = args, ok = true, error = nil, errno = nil,
                 where = nil, via = nil } -- (named: a table of 8 fields, no rehash)
  if r and not r[1] then
    step.ok, step.error = false, tostring(r[2])
  elseif r and r[2] == nil and type(r[3]) == "string" then
    step.ok, step.error = false, r[3]
  end
  if not step.ok then step.errno = errno_of(step.error) end
  return step
end

local function record(ns, op, args, r, new, level, fn)
  -- mountns's own ns:run calls (find's statmount, a shell's file tests,
  -- check's table reads) only read: a step is the user's code only. The
  -- function says whose it is, not the caller: `expect.fails("EBUSY",
  -- ns.run, ns, user_fn)` is called from mountns, and dropping it blamed
  -- the model (--both) for a mount it was never shown. One cached lookup,
  -- no walk to the user's frame, which cost `mountns check` 10 us a read
  if op == "run" and source_of(fn)[1] then return nil end
  local step = new_step(ns, op, args, r)
  step.new, step.label = new and new.serial, new and new.label_
  -- the mount fd open_tree or fsmount made, for a replay to link its own
  -- to (held weakly: the step must not keep the fd from its __gc)
  if step.ok and (op == "open_tree" or op == "fsmount") then
    step.result = setmetatable({ r[2] }, WEAK)
  end
  step.where, step.via = caller(level + 2)
  local steps = state.steps
  steps[#steps + 1] = step
  if state.on_step and not state.telling then tell(step, ns, r) end
  return step
end

-- A read (`ns:read`, `exists`, `ls`, `locked`, `mounts`, `find`) told to
-- a mirror listening as a step `{read = true}`, with its results r, so
-- run --both compares the script's answer with the model's. Not kept: a
-- replay and explain have no use for it; a plain scenario pays one test a
-- read. level: as record's.
local function heard(ns, op, args, r, level)
  local step = new_step(ns, op, args, r)
  step.read = true
  step.where, step.via = caller(level + 2)
  tell(step, ns, r)
end

-- f(...)'s results, the answer of the read `op` of ns (args: its packed
-- arguments), heard when a mirror listens (not in a tail position: heard
-- counts the method's frame).
local function answer(ns, op, args, f, ...)
  if not listening() then return f(...) end
  local r = pack(pcall(f, ...))
  heard(ns, op, args, r, 3)
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

--- Call fn(...) inside this namespace; the process returns to the
-- namespace it was in before, also when fn raises.
function Namespace:run(fn, ...)
  check_open(self, "run")
  argcheck.typed(fn, "function", "ns:run", 1, 2)
  -- a mirror listening is told which steps and reads a script's function
  -- made (`within`): the code around them is not in any step
  local opaque = state.on_step and not state.telling and not source_of(fn)[1]
  if opaque then state.within = (state.within or 0) + 1 end
  local res = pack(pcall_in(self, fn, ...))
  if opaque then state.within = state.within - 1 end
  record(self, "run", pack(...), res, nil, 2, fn)
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

-- Run ops[op](...) for ns: through its agent when ns belongs to a
-- user namespace the scenario created (only a process inside that user
-- namespace acts as its owner), else in this process after setns.
-- The method checked ns first (check_open). Returns pcall's results,
-- packed: false and the error the operation raised, or true and its
-- results. (One table a call: every mutating method of a scenario comes
-- through here.)
local function exec(ns, op, ...)
  if ns.agent then return pack(pcall(ns.agent.call, ns.agent, ns.serial, op, ...)) end
  return pack(pcall_in(ns, ops[op], ...))
end

-- exec's results (pcall's, packed) for the method `name` that called it:
-- a raised error, or the core's returned message, is raised at the
-- method's caller (level 3: checked, method, caller); else r, whose
-- r[2], ..., r[r.n] are the results. (never call it in a tail position: a
-- tail call would drop the method's frame and shift the level)
local function checked(name, r)
  if not r[1] then raise_for(name, r[2]) end
  if r[2] == nil and r[3] then error(r[3], 3) end
  return r
end

-- exec recorded as a step of the method `op` called with args (packed):
-- pcall's results, packed, for checked.
local function acted(ns, op, args, ...)
  local r = exec(ns, ...)
  record(ns, op, args, r, nil, 3)
  return r
end

-- A method that runs one core call inside the namespace.
local function method(fname)
  return function(self, ...)
    check_open(self, fname)
    local r = checked(fname, acted(self, fname, pack(...), "call", fname, ...))
    return unpack(r, 2, r.n)
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
    local r = checked(f, acted(self, f, pack(...), "call", f, ...))
    return unpack(r, 2, r.n)
  end
end

--- mkdir -p inside the namespace.
function Namespace:mkdir(path, opts)
  check_open(self, "mkdir")
  local o = { parents = true }
  local _, given = argcheck.mkdir(path, opts, 2)
  for k, v in pairs(given) do
    o[k] = v
  end
  local r = checked("mkdir", acted(self, "mkdir", pack(path, opts), "call", "mkdir", path, o))
  return unpack(r, 2, r.n)
end

--- pivot_root into new_root (a mount point in this namespace) and detach
-- the old root (pivot_root(2)'s `"."`, `"."` form, then umount -l of the
-- old root); with `put_old`, keep it. It does only that: it does not
-- make the old root's mounts slaves or private first unless asked
-- (`old_root`), so the detach, an unmount of every mount of the old
-- tree, propagates like `umount -l`: a mount of the old tree under a
-- shared mount takes the same mount of its peers with it (another
-- namespace's included). A runtime's whole sequence (runc: the old root
-- made rslave, then detached) is `{old_root = "rslave"}`
-- (`mountns.recipes.rootfs`). It does not create a mount namespace, bind
-- new_root onto itself or change new_root's parent's propagation
-- (pivot_root(2) refuses a shared one: EINVAL).
-- @tparam string new_root
-- @tparam[opt] table opts `put_old`: a directory, as a path inside the new
-- root (`"/old"`: `new_root .. "/old"` before the call); the old root stays
-- mounted there, as with pivot_root(8); `old_root`: "rslave" or
-- "rprivate", the propagation the old root's whole tree gets right after
-- the pivot (before its detach)
function Namespace:pivot_root(new_root, opts)
  check_open(self, "pivot_root")
  argcheck.path(new_root, "ns:pivot_root", 1, 2)
  local args = pack(new_root, opts)
  opts = argcheck.ns_options("pivot_root", opts, 2, 2)
  local put_old, old_root = opts.put_old, opts.old_root
  if put_old ~= nil then
    put_old = mtable.normpath(put_old, "ns:pivot_root", 2, 2)
  end
  argcheck.old_root(old_root, 2)
  local r = checked("pivot_root", acted(self, "pivot_root", args, "pivot_root", new_root,
    put_old, old_root))
  return unpack(r, 2, r.n)
end

--- Write text to a file in this namespace (created or truncated).
-- @tparam string path
-- @tparam string text
function Namespace:write(path, text)
  check_open(self, "write")
  argcheck.path(path, "ns:write", 1, 2)
  argcheck.typed(text, "string", "ns:write", 2, 2)
  local r = checked("write", acted(self, "write", pack(path, text), "write", path, text))
  return unpack(r, 2, r.n)
end

-- The methods that look at one path: each checks the path, then runs one
-- operation inside the namespace (exec's op and its leading arguments; the
-- path comes last). They are the calls made most (a shell transcript's
-- tests, expect's checks): each has one result on success, so the common
-- cases (the namespace the process is in, or an agent's) take pcall's
-- results as locals, without exec's table.
local PATH_METHODS = {
  read = { "read" },
  exists = { "call", "exists" },
  ls = { "call", "readdir" },
  locked = { "locked" },
}

for name, op in pairs(PATH_METHODS) do
  local public, op1, op2 = "ns:" .. name, op[1], op[2]
  local direct = ops[op1] -- ops.call(f, ...) is core[f](...): called as that below
  Namespace[name] = function(self, path)
    if getmetatable(self) ~= Namespace or self.closed then check_open(self, name) end
    argcheck.path(path, public, 1, 2)
    local ok, v, err
    local ag = self.agent
    if ag then
      if op2 then
        ok, v, err = pcall(ag.call, ag, self.serial, op1, op2, path)
      else
        ok, v, err = pcall(ag.call, ag, self.serial, op1, path)
      end
    elseif state.current == self then
      if op2 then ok, v, err = pcall(core[op2], path) else ok, v, err = pcall(direct, path) end
    else
      local r
      if op2 then r = exec(self, op1, op2, path) else r = exec(self, op1, path) end
      ok, v, err = r[1], r[2], r[3]
    end
    if state.on_step and not state.telling then
      heard(self, name, pack(path), pack(ok, v, err), 2)
    end
    if not ok then raise_for(name, v, 3) end
    if v == nil and err then error(err, 2) end
    return v
  end
end

--- The content of a file in this namespace.
-- @function Namespace:read
-- @tparam string path
-- @treturn string

--- Whether a path exists in this namespace (a symlink counts as itself).
-- @function Namespace:exists
-- @tparam string path
-- @treturn boolean

--- The names in a directory of this namespace, sorted (without `.`, `..`).
-- @function Namespace:ls
-- @tparam string path
-- @treturn {string,...}

--- Whether the mount at path is locked in this namespace (a less privileged
-- namespace locks what it inherited). Found in a throw-away copy of the
-- namespace, so this one is not changed. Raises if path is not a mount.
-- @function Namespace:locked
-- @tparam string path
-- @treturn boolean

local function new_namespace(handle, label, ag)
  state.count = state.count + 1
  local ns = setmetatable({ nsfd = handle, label_ = label or ("ns" .. state.count),
                            serial = state.count, agent = ag, closed = false },
                          Namespace)
  state.namespaces[#state.namespaces + 1] = ns
  return ns
end

--- A new namespace, a copy of this one (unshare -m).
-- @tparam[opt] table opts `propagation`: "private" (default, as unshare(1)),
-- "shared", "slave" or "unchanged"; `label`; `user = true`: the new mount
-- namespace is owned by a new user namespace (the caller mapped to root
-- inside), so the kernel's rules for less privileged copies apply. Later
-- unshares from it stay in that user namespace unless `user` is asked again.
-- @treturn Namespace
function Namespace:unshare(opts)
  check_open(self, "unshare")
  local args = pack(opts)
  local prop
  opts, prop = argcheck.unshare(opts, 2)
  local serial = state.count + 1
  local ag = self.agent
  if opts.user then
    local userns = ag and assert(core.namespace(ag.pid, "user"))
    local err
    ag, err = agent.start(handle_of(self), userns, prop, serial)
    if userns then userns:close() end
    if not ag then
      record(self, "unshare", args, { false, err }, nil, 2)
      error(err, 2)
    end
    state.agents[#state.agents + 1] = ag
  elseif ag then
    local r = pack(pcall(ag.call, ag, self.serial, "unshare", prop, serial))
    if not r[1] or (r[2] == nil and r[3]) then record(self, "unshare", args, r, nil, 2) end
    checked("unshare", r)
  end
  local handle, err
  if ag then
    handle, err = core.namespace(ag.pid) -- the agent is in the new one now
  else
    local back = state.current
    switch_to(self)
    handle_of(self) -- the process leaves it
    local ok
    ok, err = core.unshare { mount = true, propagation = prop }
    if ok then handle, err = core.namespace() end
    -- back to where the process was: this namespace stays alive through
    -- its handle, the new one through the new handle
    state.current = nil
    switch_to(back or self)
  end
  if not handle then
    record(self, "unshare", args, { false, err }, nil, 2)
    error(err, 2)
  end
  local new = new_namespace(handle, opts.label, ag)
  record(self, "unshare", args, nil, new, 2)
  return new
end

--- Run a shell transcript in this namespace: `mountns.shell(ns, text, opts)`.
function Namespace:shell(text, opts)
  local out, names, steps = shell.method(self, text, opts)
  return out, names, steps
end

--- Mount events of this namespace (see `mountns.watch`).
-- @tparam[opt] table opts `timeout` (seconds without an event after which
-- the iteration ends; nil: never), `run` (a function called once the
-- watch is armed: its events are seen), `callback` (called with each event
-- instead of iterating; returning false stops; `ns:watch` then returns the
-- number of events), `fallback = true` (poll and diff even where fanotify
-- has mount events), `interval` (seconds between re-reads of the table when
-- nothing signals)
-- @return an iterator of events `{kind = "attach"|"detach"|"change", mount
-- = record, ns = ns, via = "fanotify"|"poll"|"rescan"}` ("change" also has
-- `before` and `fields`), the watch object (its `path` says "fanotify" or
-- "poll"), nil, and the watch again as the closing value of a 5.4 for loop
-- @usage for ev in sh2:watch { timeout = 0.1, run = function()
--   sh1:mount("a", "/X/a", "tmpfs") end } do print(watch.describe(ev)) end
function Namespace:watch(opts)
  check_open(self, "watch")
  watch.options(opts, "ns:watch", 1)
  return watch.watch(self, opts)
end

--- The user namespace that owns this mount namespace, as a core handle
-- (for idmapped mounts); close it when done.
function Namespace:userns()
  check_open(self, "userns")
  return assert(core.namespace(self.agent and self.agent.pid or nil, "user"))
end

--- The mount table of this namespace.
-- @tparam[opt] table opts `propagate_from = true` (see `mountns.mounts`);
-- `root = path`: the table as a process whose root is path sees it (only
-- the mounts reachable from there, mount points relative to it,
-- propagate_from computed against it)
function Namespace:mounts(opts)
  check_open(self, "mounts")
  local given = opts
  opts = argcheck.ns_options("mounts", opts, 1, 2)
  if opts.root ~= nil then
    opts = { propagate_from = opts.propagate_from,
             root = mtable.normpath(opts.root, "ns:mounts", 1, 2) }
  end
  if not listening() then return mounts.mounts(self, opts) end
  local t, err = answer(self, "mounts", pack(given), mounts.mounts, self, opts)
  if t == nil then return nil, err end
  return t -- (one value: ns:mounts() may end an argument list)
end

-- statmount(2) of the mount a path is on: a few microseconds at any table
-- size, where reading the whole table costs milliseconds. The top mount
-- of a path that lookup reaches; false when no mount at all has path as
-- its mount point (listmount's `target`: each mount's mount point alone,
-- no record built: expect.not_mounted's usual answer); else nil (a mount
-- there that lookup does not reach, under an over-mount: find asks the
-- table).
local function statmount_at(path)
  local r = core.statmount(path)
  -- a path that is not itself a mount point is on its parent's mount
  if r and r.target == path then return r end
  local at = core.listmount { target = path }
  if at and #at == 0 then return false end
  return nil
end

-- ns:find's answer, its arguments checked: the record, or nil (and the
-- refusal of a root view that cannot be read).
local function find_top(self, path, root)
  if root then
    local t, err = mounts.mounts(self, { root = root })
    if not t then return nil, err end
    return t:find(path)
  end
  -- statmount_complete: the kernel gives every field of a record (Linux
  -- 6.12's statmount has no source and no fs subtype). Not the record's
  -- own mask: the kernel leaves a field's bit clear when its text is empty
  -- (no subtype, no fs options), so the mask cannot tell missing from empty.
  local f = core.features()
  if f.statmount_complete and f.statx_unique_id then
    -- as self:run(statmount_at, path), without its step: the recorder
    -- drops a step of mountns's own ns:run anyway (a read), after the
    -- stack walk and the packing that this saves
    local ok, r = pcall_in(self, statmount_at, path)
    if not ok then error(r, 0) end
    if r then return r end
    if r == false then return nil end
  end
  -- (not self:mounts(): that would be told to a mirror as a read of its own)
  return mounts.mounts(self, {}):find(path)
end

--- The topmost mount at path in this namespace, or nil: what
-- `ns:mounts():find(path)` answers (see `mountns.table`), also for a mount
-- hidden under an over-mount. `path` is normalised lexically (`/S/`,
-- `//S` and `/./S` are `/S`). Uses statmount(2) where the kernel gives
-- complete records (Linux 6.13+) and the path reaches the mount, else the
-- whole mount table. `opts.root = dir`: the topmost mount at path as a
-- process whose root is dir sees it (`path` relative to that root; see
-- `ns:mounts`).
function Namespace:find(path, opts)
  check_open(self, "find")
  local given = listening() and pack(path, opts) -- (else no table)
  path = mtable.normpath(path, "ns:find", 1, 2)
  opts = argcheck.ns_options("find", opts, 2, 2)
  local root = opts.root ~= nil and mtable.normpath(opts.root, "ns:find", 2, 2) or nil
  local m, err = answer(self, "find", given, find_top, self, path, root)
  if m == nil and err then error(err, 2) end
  return m
end

--- The kernel version the namespace follows, "MAJOR.MINOR": the running
-- kernel's (read when mountns.model loaded, before any scenario: a
-- scenario's / has no /proc); a model namespace's `ns:linux()` is its
-- world's. Scripts that expect what changed between kernels ask this.
-- @treturn string such as "6.18"
function Namespace:linux()
  check_open(self, "linux")
  return model.running_linux()
end

--- The namespace's ID (the inode number lsns shows).
function Namespace:id()
  check_open(self, "id")
  return handle_of(self):id()
end

--- The core namespace handle (an nsfs fd).
function Namespace:handle()
  check_open(self, "handle")
  return handle_of(self)
end

--- Get or set the label used in diagnostics and pictures ("sh1").
function Namespace:label(name)
  if not is_ns(self) then check_open(self, "label") end
  if name ~= nil then
    self.label_ = tostring(name)
    if state and state.steps then record(self, "label", pack(self.label_), nil, nil, 2) end
    return self
  end
  return self.label_
end

--- The PID of a process living in this namespace (started on first use),
-- so outside tools can look in: `findmnt -N PID`, `/proc/PID/mountinfo`.
function Namespace:pid()
  check_open(self, "pid")
  if self.pid_ then return self.pid_ end
  local h = handle_of(self)
  -- the helper: enter the namespace, say so, then wait until the
  -- scenario closes the pipe or dies (PR_SET_PDEATHSIG kills it then too)
  local proc = assert(child.spawn({ up = { "ready" }, down = { "hold" } }, function(fds)
    local ok, err = h:enter()
    -- the scenario's namespace fds would keep those namespaces alive
    -- after ns:close(): the helper holds none
    core.close_namespaces()
    -- no capability: an ns:exec tool (which has none) may then read its
    -- /proc/PID/root and the like (ptrace's rule: a subset of its own)
    if ok then ok, err = core.drop_capabilities() end
    core.write_fd(fds.ready, ok and "ok" or err)
    core.close_fd(fds.ready)
    core.read_all(fds.hold)
  end))
  local status = core.read_all(proc.fds.ready)
  proc:close("ready")
  self.pid_, self.pid_proc = proc.pid, proc
  if status ~= "ok" then
    self:close_pid()
    error("pid: " .. tostring(status), 2)
  end
  return proc.pid
end

-- ---- ns:exec: a host tool, read-only (mountns.tool) ------------------------

--- The environment of a tool run by `ns:exec`, before its `env` option
-- adds to it (`mountns.tool.ENV`): `MOUNTNS_PID` is added too (ns:pid()).
M.TOOL_ENV = tool.ENV

--- Run a host tool that looks at this namespace: `ns:exec{"findmnt", "-o",
-- "TARGET,PROPAGATION"}`, `ns:exec{"cat", "/proc/self/mountinfo"}`.
-- The tool runs on the host's files, read-only (its `/`, `PATH` and
-- libraries are the host's: a scenario's own `/` is a bare tmpfs), with
-- a `/dev` of `null`, `zero`, `full`, `random`, `urandom`, `tty` and a
-- writable tmpfs `/dev/shm`, no capability, and the environment
-- `TOOL_ENV` (`PATH`, `HOME` and `TMPDIR` `/dev/shm`, `LANG=C`) plus
-- `MOUNTNS_PID` (ns:pid(), which `mountns show` lists by default) and
-- the `env` option. It sees
-- this namespace through `/proc/self`: in a throw-away private copy of
-- the isolate's namespace, the mount files of `/proc/self` (the tool's
-- own PID) are covered by bind mounts of those of `/proc/PID` of
-- `ns:pid()`, so `/proc/self/mountinfo` and `/proc/mounts` are this
-- namespace's, as its own processes see them.
-- A process that is not the tool itself (a child of a shell) has its own
-- `/proc/self`: pass `/proc/$MOUNTNS_PID` there. What the tool starts
-- ends with it.
-- @tparam table argv the program (looked up in `TOOL_ENV`'s `PATH`) and its
-- arguments, strings
-- @tparam[opt] table opts `timeout` in seconds (default 60); `env`: a table
-- of `NAME = "value"` added to the tool's environment
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
  opts = argcheck.options(opts, "ns:exec", 2, { "timeout", "env" }, 2)
  local timeout = argcheck.seconds(opts.timeout, "ns:exec", 2, "option 'timeout'", 2)
    or 60
  tool.check_env(opts.env)
  local host = state.host
  if not host then error("ns:exec: the isolate's namespace is gone", 2) end
  local helper = self:pid()
  local result, err = tool.run(host, helper, argv, timeout, opts.env)
  if not result then error(err, 2) end
  record(self, "exec", pack(argv, opts), nil, nil, 2)
  return result
end

-- End the helper process of ns:pid(), if any, and reap it.
function Namespace:close_pid()
  if self.pid_ then
    local proc = self.pid_proc
    proc:close()
    proc:kill()
    proc:wait()
    self.pid_, self.pid_proc = nil, nil
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
  if self.nsfd then self.nsfd:close() end
  if self.agent and not self.agent.stopped then
    pcall(self.agent.close_ns, self.agent, self.serial)
  end
  self.closed = true
  if state and state.steps and not state.finishing then
    record(self, "close", pack(), nil, nil, 2)
  end
end

function Namespace:__tostring()
  local id = self.closed and "closed" or handle_of(self):id()
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
    if type(ns) ~= "table" or type(ns.mounts) ~= "function" then
      argcheck.error("peer_groups", i, "scenario namespace expected, got "
        .. (ns == nil and "nil" or type(ns)), 2)
    end
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

-- ---- the scenario's state ---------------------------------------------------

--- Start a scenario's state in this process (the scenario's child, inside
-- its own namespace): the first namespace is the caller's.
-- @param host core handle of the isolate's namespace (kept for `ns:exec`)
-- @tparam[opt] string label the first namespace's label
-- @tparam[opt] function on_step called as on_step(step, ns, results)
-- after each recorded step and each read (`{read = true}`, not kept),
-- results: the call's, pcall's packed, or nil (`mountns run --both`
-- mirrors them on a model); what it raises comes out of the method
-- @treturn Namespace the first namespace
function M.begin(host, label, on_step)
  state = { namespaces = {}, count = 0, agents = {}, host = host, on_step = on_step }
  local first = new_namespace(nil, label) -- its handle opened on first use
  state.steps = { first_label = first.label_ }
  state.current = first
  return first
end

--- The steps this scenario recorded so far (see "the step recorder" at the
-- top of namespace.lua): a list, in call order, of `{ns = serial, op =
-- "bind", args = {n = 2, "/X", "/Z"}, ok = true|false, errno = "ENOENT",
-- error = message, new = serial, label = label (of the namespace unshare
-- made), where = "file.lua:19", via = "recipes.lua:57"}`; its field
-- `first_label` is the first namespace's label. Empty outside a scenario.
-- The list itself, not a copy: read it, do not change it.
-- @treturn table
function M.steps()
  return state and state.steps or { first_label = "ns1" }
end

--- A namespace of this scenario by its serial (a step's `ns`, `new`).
-- @tparam int serial
-- @treturn Namespace or nil
function M.by_serial(serial)
  return state and state.namespaces[serial]
end

--- The namespaces of this scenario that are still open, in creation order.
-- @treturn table list of namespaces
function M.open_namespaces()
  local open = {}
  for _, ns in ipairs(state.namespaces) do
    if not ns.closed then open[#open + 1] = ns end
  end
  return open
end

--- Close every namespace of this scenario, last first, and stop its agents.
function M.finish()
  state.finishing = true
  -- the agents killed first (no request to drop each namespace: they go
  -- with it), their exits overlapping the closes here; reaped last
  for _, ag in ipairs(state.agents) do ag:kill() end
  for i = #state.namespaces, 1, -1 do pcall(Namespace.close, state.namespaces[i]) end
  for _, ag in ipairs(state.agents) do ag:stop() end
end

return M
