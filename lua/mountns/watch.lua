--- watch: live mount events of one mount namespace.
--
-- `ns:watch(opts)` (scenario namespaces) and `watch.open(target, opts)`
-- yield events `{kind = "attach"|"detach"|"change", mount = record, ns = ns}`
-- as the kernel makes them, propagated copies included.
--
-- Two sources, one shape:
--
-- * fanotify mount marks (Linux 6.15+): `FAN_MNT_ATTACH` / `FAN_MNT_DETACH`
--   per mount, with its 64-bit unique ID only. The watch keeps the records
--   (a table read at start, then `statmount` of each attached ID) so that a
--   detach can say which mount left. A move inside the namespace is one
--   "change" event (field `target`).
-- * `poll()` with `POLLPRI` on a mountinfo file of the namespace, then a
--   re-read of the mount table and `mountns.diff` against the records. On
--   the fanotify path this only finds "change" (remounts); on older kernels
--   (or with `opts.fallback = true`) it is the whole watch.
--
-- Propagation changes (make-shared, make-slave, ...) do not signal the
-- mountinfo file (checked on Linux 6.18), and an fs-wide remount signals
-- only the namespace it was made in. So the table is also re-read every
-- `opts.interval` seconds and before a timeout ends the watch: a change
-- made by the caller before it asks for events is always reported.
--
-- The mountinfo file is opened while the scenario process is inside the
-- namespace: the kernel binds the file to the namespace its opener was in,
-- so the watch stays on that namespace while the process moves on.
-- @module mountns.watch

local core = require "mountns.core"
local mtable = require "mountns.table"
local mdiff = require "mountns.diff"
local record = require "mountns.record"
local argcheck = require "mountns.args"
local mounts = require "mountns.mounts"
local cli = require "mountns.cli"
local stream = require "mountns.stream"

local M = {}

--- The watch object: `next`, `events`, `close`, and fields `path`
-- ("fanotify" or "poll"), `reason` (why fanotify was not used, or nil).
-- @type Watch
local Watch = {}
Watch.__index = Watch
M.Watch = Watch

-- errnos after which fanotify mount events are taken as absent: an old
-- kernel (no FAN_REPORT_MNT: EINVAL; no fanotify: ENOSYS), or no
-- CAP_SYS_ADMIN where fanotify needs it (EPERM)
local FALLBACK_ERRNOS = {}
for _, e in ipairs { "ENOSYS", "EINVAL", "EPERM", "EOPNOTSUPP" } do
  if core.errno[e] then FALLBACK_ERRNOS[core.errno[e]] = true end
end

--- Default seconds between re-reads of the mount table when nothing
-- signals (propagation changes signal nothing).
M.INTERVAL = 1

-- What mountns.diff compares, plus the mount point (a move keeps the
-- unique ID).
local FIELDS = { "target" }
for _, f in ipairs(record.CHANGES) do FIELDS[#FIELDS + 1] = f end

local key = record.key

local function changed_fields(a, b)
  local fields = {}
  for _, f in ipairs(FIELDS) do
    if a[f] ~= b[f] then fields[#fields + 1] = f end
  end
  return fields
end

-- A scenario namespace (`mountns.namespace`), known by its methods: this
-- module sits below that class (ns:watch calls it), so it does not require
-- it.
local function is_scenario_ns(v)
  return type(v) == "table" and type(v.handle) == "function"
    and type(v.run) == "function" and type(v.mounts) == "function"
end

-- ---- opening ----------------------------------------------------------------

local open

-- What to watch: a scenario namespace, a PID, or nil (the caller's
-- namespace); anything else raises as bad argument #1 to fname (level as
-- argcheck's).
local function check_target(target, fname, level)
  if target == nil or is_scenario_ns(target) then return end
  if type(target) ~= "number" then
    argcheck.error(fname, 1, "scenario namespace, PID or nil expected, got " .. type(target),
      level + 1)
  end
  argcheck.pid(target, fname, 1, level + 1)
end

-- Resolve what to watch (checked: check_target). Returns the core handle,
-- whether this module owns it, the poller, and the object events name as
-- `ns`; a failure raises at level (as error's, from resolve's caller).
local function resolve(target, level)
  if is_scenario_ns(target) then
    local h = target:handle()
    -- opened inside the namespace: the file stays bound to it
    local p = target:run(function()
      local poller, err = core.mountinfo_poller()
      if not poller then error(err, 0) end
      return poller
    end)
    return h, false, p, target
  end
  local h, err = core.namespace(target)
  if not h then error(err, level + 1) end
  local p
  p, err = core.mountinfo_poller(target)
  if not p then h:close(); error(err, level + 1) end
  return h, true, p, h
end

-- The options of watch.open (those of ns:watch / mountns.watch: args's)
local OPEN_OPTS = { "fallback", "timeout", "interval" }

local function check_times(opts, fname, argn, level)
  argcheck.watch_times(opts, fname, argn, level + 1)
end

--- Check the options of ns:watch / mountns.watch (fname names which) and
-- raise at the caller of the function that called this one.
-- @tparam table opts
-- @tparam string fname
-- @tparam integer argn
-- @treturn table opts
function M.options(opts, fname, argn)
  local checked = argcheck.watch_options(opts, fname, argn, 3) -- (no tail call: levels)
  return checked
end

--- Start watching.
-- @param target a scenario namespace, a PID, or nil for the caller's
-- namespace
-- @tparam[opt] table opts `fallback = true`: poll and diff even where
-- fanotify has mount events; `timeout`: default seconds `next` waits
-- (nil: for ever); `interval`: seconds between re-reads when nothing
-- signals (default `M.INTERVAL`)
-- @treturn Watch
function M.open(target, opts)
  opts = argcheck.options(opts, "watch.open", 2, OPEN_OPTS, 2)
  check_times(opts, "watch.open", 2, 2)
  check_target(target, "watch.open", 2)
  local w = open(target, opts, 2)
  return w
end

-- watch.open's work, its arguments checked; raises at level (as error's,
-- from open's caller): the caller of `watch.open` or of `watch`.
function open(target, opts, level)
  level = level + 1
  local h, own, poller, ns = resolve(target, level)
  local w = setmetatable({ handle = h, own_handle = own, poller = poller, ns = ns,
                           queue = {}, head = 1, records = {}, closed = false,
                           timeout = opts.timeout,
                           interval = opts.interval == nil and M.INTERVAL or opts.interval },
                         Watch)
  if opts.fallback then
    w.reason = "fallback asked for"
  elseif not core.features().statmount then
    -- fanotify names a mount by its unique ID, which only statmount(2)
    -- and listmount(2) resolve: without them (valgrind 3.19 answers
    -- ENOSYS where the kernel has both) every event would read "gone"
    w.reason = "statmount(2) is not available: fanotify's unique IDs cannot be resolved"
  else
    local fan, err, errno = core.fanotify_mounts(h)
    if fan then
      w.fan = fan
    elseif FALLBACK_ERRNOS[errno] then
      w.reason = err
    else
      w:close()
      error(err, level)
    end
  end
  w.path = w.fan and "fanotify" or "poll"
  -- the records come after the marks: a mount attached in between is in
  -- both, which costs an extra attach event, never a lost one
  local ok, err = pcall(function()
    for _, m in ipairs(w:read_table()) do w.records[key(m)] = m end
  end)
  if not ok then w:close(); error(err, level) end
  w.last_scan = core.clock()
  return w
end

-- The caller's mount table, with unique IDs (run inside a namespace).
local function own_table_with_unique_ids()
  local t, err = mounts.mounts()
  if not t then error(err, 0) end
  return mounts.with_unique_ids(t)
end

--- The mount table of the watched namespace: listmount + statmount where
-- the kernel has them complete (6.13+), whose records carry the unique IDs
-- fanotify names and that tell a moved mount from a new one; else what
-- `ns:mounts()` / `mountns.mounts` read (mountinfo), given unique IDs where
-- the kernel has listmount (6.8+; before, a move shows as a detach and an
-- attach).
function Watch:read_table()
  if self.listmount == nil then
    self.listmount = core.features().statmount_complete and true or false
  end
  if self.listmount then
    local t = mounts.listmount(self.handle)
    if t then return mtable.new(t) end
    self.listmount = false -- listmount of another namespace needs 6.10+
  end
  -- unique IDs where the kernel has them (6.8+): events then name the
  -- mount fanotify and statmount would. A scenario namespace's are listed
  -- from inside it: from outside, 6.12's listmount of a namespace that
  -- pivot_root'ed returned only its old root mount.
  if is_scenario_ns(self.ns) then
    local f = core.features()
    if not (f.listmount and f.statmount) then return self.ns:mounts() end
    return mtable.new(self.ns:run(own_table_with_unique_ids))
  end
  local t, err = mounts.mounts(self.handle)
  if not t then error(err, 0) end
  return mounts.with_unique_ids(t, self.handle)
end

local function check_open(self)
  if self.closed then error("attempt to use a closed watch", 3) end
end

--- Stop watching; idempotent. The poller's mountinfo file keeps the
-- namespace alive until then.
function Watch:close()
  if self.closed then return end
  self.closed = true
  if self.fan then self.fan:close() end
  if self.poller then self.poller:close() end
  if self.own_handle then self.handle:close() end
end
Watch.__close = Watch.close
Watch.__gc = Watch.close

function Watch:__tostring()
  return string.format("watch of %s (%s)%s", tostring(self.ns), self.path,
                       self.closed and " (closed)" or "")
end

-- ---- turning kernel signals into events ---------------------------------

function Watch:push(kind, m, via, extra)
  local ev = { kind = kind, mount = m, ns = self.ns, via = via }
  for k, v in pairs(extra or {}) do ev[k] = v end
  self.queue[#self.queue + 1] = ev
end

-- statmount of an attached or moved mount, or a stub when it is gone again
function Watch:stat(uid)
  local m = core.statmount(uid, { ns = self.handle })
  return m or { unique_id = uid, gone = true }
end

-- fanotify events -> attach/detach/change; the records follow
function Watch:take_fanotify(list)
  for _, e in ipairs(list) do
    local k = e.unique_id and key { unique_id = e.unique_id }
    if e.kind == "attach" then
      local m = self:stat(e.unique_id)
      if not m.gone then self.records[k] = m end
      self:push("attach", m, "fanotify")
    elseif e.kind == "detach" then
      local m = self.records[k] or { unique_id = e.unique_id, gone = true }
      self.records[k] = nil
      self:push("detach", m, "fanotify")
    elseif e.kind == "move" then
      local m, old = self:stat(e.unique_id), self.records[k]
      if not m.gone then self.records[k] = m end
      self:push("change", m, "fanotify", { before = old,
        fields = old and changed_fields(old, m) or { "target" } })
    elseif e.kind == "overflow" then
      self.overflowed = true -- lost events: the next scan diffs everything
    end
  end
end

function Watch:drain_fanotify()
  local list, err = self.fan:read(0)
  if not list then error(err, 0) end
  self:take_fanotify(list)
  return #list
end

-- Re-read the table and report the difference with the records. On the
-- fanotify path only changes of known mounts: attach and detach come from
-- fanotify (a mount missing here may just not have been read yet).
function Watch:scan(via)
  if self.fan then self:drain_fanotify() end
  local t = self:read_table()
  self.last_scan = core.clock()
  local full = not self.fan or self.overflowed
  self.overflowed = false
  -- mountns.diff's matching, with the mount point compared too: a moved
  -- mount keeps its unique ID
  local before = {}
  for _, m in pairs(self.records) do before[#before + 1] = m end
  local d = mdiff.match(before, t, FIELDS)
  for _, c in ipairs(d.changed) do
    self:push("change", c.after, via, { before = c.before, fields = c.fields })
  end
  if full then
    for _, m in ipairs(d.added) do self:push("attach", m, via) end
    table.sort(d.removed, function(a, b) return a.id < b.id end)
    for _, m in ipairs(d.removed) do self:push("detach", m, via) end
    self.records = {}
    for _, m in ipairs(t) do self.records[key(m)] = m end
  else
    -- attach and detach come from fanotify: only the known mounts follow
    for _, m in ipairs(t) do
      local k = key(m)
      if self.records[k] then self.records[k] = m end
    end
  end
end

function Watch:pop()
  local ev = self.queue[self.head]
  if ev == nil then return nil end
  self.queue[self.head] = nil
  self.head = self.head + 1
  if self.queue[self.head] == nil then self.queue, self.head = {}, 1 end
  return ev
end

--- The next event, waiting up to `timeout` seconds (default: the watch's
-- `timeout`; nil: for ever). Before it gives up it re-reads the table once,
-- so changes that signal nothing are still reported.
-- @treturn table|nil the event, or nil on timeout
function Watch:next(timeout)
  check_open(self)
  if timeout == nil then timeout = self.timeout end
  if timeout ~= nil and (type(timeout) ~= "number" or timeout ~= timeout) then
    argcheck.error("watch:next", 1, "seconds expected, got " .. (type(timeout) == "number"
      and tostring(timeout) or type(timeout)), 2)
  end
  local deadline = timeout and core.clock() + timeout
  -- waited: the kernel's signals were taken at least once (a wait, or a
  -- scan, which drains fanotify and reads the table). The deadline is
  -- checked first, so no busy branch can hold it back.
  local final, waited = false, false
  while true do
    local ev = self:pop()
    if ev then return ev end
    local now = core.clock()
    if deadline and now >= deadline and waited then
      if final then return nil end
      final = true
      local via = self.dirty and "poll" or "rescan"
      self.dirty = false
      self:scan(via)
    elseif self.dirty then
      -- a signalled change is read once the fanotify events it came with
      -- are out: they do not wait for a re-read of a large table
      self.dirty = false
      self:scan("poll")
      waited = true
    elseif self.interval and now >= self.last_scan + self.interval then
      self:scan("rescan")
      waited = true
    else
      local wait = self.interval and self.last_scan + self.interval - now
      local left = deadline and deadline - now
      if left and (not wait or left < wait) then wait = left end
      if wait and wait < 0 then wait = 0 end
      waited = true
      local fan_ready, changed, err
      if self.fan then
        fan_ready, changed = core.wait_any(wait, self.fan, self.poller)
        if fan_ready == nil then error(changed, 2) end
      else
        changed, err = self.poller:wait(wait)
        if changed == nil then error(err, 2) end
      end
      local n = fan_ready and self:drain_fanotify() or 0
      -- the signal that came with fanotify events is theirs: re-reading a
      -- large table for each mount would make every event wait for it. A
      -- remount in the same instant is found by the next periodic re-read.
      if changed and n == 0 then self.dirty = true end
    end
  end
end

--- All events until none comes for `timeout` seconds (0: those already
-- there).
-- @function Watch:events
-- @treturn table list of events
Watch.events = stream.events

-- ---- the iterator and callback forms ---------------------------------------------

--- Watch one target; the iterator and callback forms of `ns:watch`
-- (`mountns.stream`). (`ns:watch` of `mountns.namespace` calls it.)
function M.watch(target, opts)
  opts = M.options(opts, "watch", 2)
  check_target(target, "watch", 2)
  local w = open(target, { fallback = opts.fallback, timeout = opts.timeout,
                           interval = opts.interval }, 2)
  return stream.forms(w, opts)
end

-- ---- text -----------------------------------------------------------------

-- Text in an event line is escaped as `mountns.escape` does: a crafted
-- mount point cannot forge a line or drive the terminal.
local escape = core.escape

local function ns_name(ns)
  local ok, s = pcall(tostring, ns)
  return ok and escape(s) or "?"
end

--- "shared:12 master:3", "private", "unbindable" of a record.
function M.propagation(m)
  if m.gone then return "gone" end
  local groups = record.groups(m)
  return groups ~= "" and groups or m.propagation or "?"
end

--- The path an event names: the mount point, or "unique ID N" when the
-- mount went before it could be looked at.
function M.path_of(ev)
  return ev.mount.target or ("unique ID " .. tostring(ev.mount.unique_id))
end

--- One line for an event:
-- "attach /X/a in sh2 mnt:[4026532301]: shared:12 (id 45)".
function M.describe(ev)
  local m = ev.mount
  local s = string.format("%-6s %s in %s: %s", ev.kind, escape(M.path_of(ev)),
                          ns_name(ev.ns), escape(M.propagation(m)))
  if m.id then s = s .. " (id " .. tostring(m.id) .. ")" end
  if ev.kind == "change" and ev.before then
    -- what changed: "propagation shared:3 -> private", "options rw -> ro"
    local parts, prop = {}, false
    for _, f in ipairs(ev.fields or {}) do
      if f == "propagation" or f == "shared" or f == "master" or f == "unbindable" then
        prop = true
      else
        parts[#parts + 1] = string.format("%s %s -> %s", f,
          escape(tostring(ev.before[f])), escape(tostring(m[f])))
      end
    end
    if prop then
      table.insert(parts, 1, "propagation " .. escape(M.propagation(ev.before)) .. " -> "
                   .. escape(M.propagation(m)))
    end
    if #parts > 0 then s = s .. "; " .. table.concat(parts, "; ") end
  end
  return s
end

-- ---- the command line: `mountns show --watch` -----------------------------

-- The state and start time of a process (fields 3 and 22 of
-- /proc/PID/stat, after the command name in parentheses), nil once gone.
local function proc_stat(pid)
  local f = io.open("/proc/" .. pid .. "/stat")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  local fields = {}
  for w in (s and s:match(".*%) (.*)$") or ""):gmatch("%S+") do fields[#fields + 1] = w end
  if not fields[20] then return nil end
  return fields[1], fields[20]
end

-- Whether the process first seen with start time `start` has exited (a
-- zombie has, and a new process with its PID is another one).
local function exited(pid, start)
  local state, now = proc_stat(pid)
  return state == nil or state == "Z" or state == "X" or now ~= start
end

--- `mountns show --watch` (bin/mountns, its options checked there): a
-- header line once the watch is armed, then one line per event (flushed at
-- once, so a reader sees it as it happens). Ends at the timeout, with a
-- line when the watched process exits, with exit status 130 and no
-- traceback on Ctrl-C; a watch that cannot start exits with status 2
-- (`mountns.cli.die`), one that fails later with 1.
-- @tparam[opt] int pid the process whose namespace is watched (nil: this one)
-- @tparam table opts `timeout`, `interval` (seconds or nil), `fallback`
-- @treturn int the exit status, 0
function M.command(pid, opts)
  local start
  if pid then start = select(2, proc_stat(pid)) end
  -- Ctrl-C: lua.c raises "interrupted!", a poll cut short says EINTR
  local function interrupted(msg)
    if msg:find("interrupted!", 1, true) or msg:find("(EINTR)", 1, true) then
      io.stderr:write("mountns: show --watch: interrupted\n")
      os.exit(130)
    end
  end
  local timeout, interval = opts.timeout, opts.interval
  local ok, w = pcall(M.open, pid, { fallback = opts.fallback, interval = interval })
  if not ok then
    interrupted(tostring(w))
    cli.die(tostring(w))
  end
  local why
  ok, why = pcall(function()
    print(string.format("watching %s via %s%s", tostring(w.handle), w.path,
                        w.reason and (" (" .. core.escape(w.reason) .. ")") or ""))
    io.stdout:flush()
    local deadline = timeout and core.clock() + timeout
    -- with a PID, wake at least once a second to see whether it exited
    local step = pid and math.min(interval or M.INTERVAL, 1)
    while true do
      local wait = deadline and math.max(0, deadline - core.clock())
      if step and (not wait or step < wait) then wait = step end
      local ev = w:next(wait)
      if ev then
        print(M.describe(ev))
        io.stdout:flush()
      end
      if pid and exited(pid, start) then
        return "process " .. pid .. " exited"
      end
      if not ev and deadline and core.clock() >= deadline then return nil end
    end
  end)
  w:close()
  if not ok then
    interrupted(tostring(why))
    io.stderr:write("mountns: show --watch: ", tostring(why), "\n")
    os.exit(1)
  end
  if why then
    print("watch ended: " .. why)
  end
  return 0
end

return M
