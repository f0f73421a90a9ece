--- model: a pure-Lua simulation of mount namespaces and their propagation.
-- `model.scenario([name,] fn, opts)` hands `fn` a *model namespace*: the
-- methods of a scenario namespace (`mountns.namespace`), its argument
-- checks and its error messages ("bind /X /Z: No such file or directory
-- (ENOENT)"), with mount tables of the same records, so `expect`,
-- `normalize`, `format`, `dot` and golden tables work on it unchanged. No
-- fork, no namespaces, no root, no Linux: the rules of fs/pnode.c and
-- fs/namespace.c as Lua code, checked against the kernel by
-- spec/22-model_spec.lua (same steps on both, equal golden texts and
-- equal errno names).
--
-- What is modelled: superblocks with directories and files; mount, bind,
-- rbind (unbindable mounts pruned), move, umount (lazy too; propagated to
-- the copies, an over-mount of a copy's root reparented), remount,
-- make-[r]shared/private/slave/unbindable, namespace copies (`unshare`,
-- each propagation mode; `user = true`: shared mounts become slaves, the
-- copied mounts are locked) and their closing; peer groups, masters and
-- slaves, `propagate_from`. A world keeps `world.events`: every call, each
-- copy propagation made and where the rules stopped one (for explain).
-- @module mountns.model

local argcheck = require "mountns.args"
local mtable = require "mountns.table"
local format = require "mountns.format"
-- only for the wall clock of a scenario's timeout and time (the model
-- loads without core.so: see `clock`)
local has_core, core = pcall(require, "mountns.core")

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...)
  return { n = select("#", ...), ... }
end

local function pass(...)
  return ...
end

-- ---- errors ----------------------------------------------------------------

-- strerror(3) of glibc for the errno names the model raises
local STRERROR = {
  EPERM = "Operation not permitted", ENOENT = "No such file or directory",
  EINVAL = "Invalid argument", ENOTDIR = "Not a directory",
  EBUSY = "Device or resource busy", ELOOP = "Too many levels of symbolic links",
  EEXIST = "File exists", ENODEV = "No such device", EISDIR = "Is a directory",
  EROFS = "Read-only file system", EACCES = "Permission denied",
  ENOTEMPTY = "Directory not empty", EXDEV = "Invalid cross-device link",
}
M.STRERROR = STRERROR

-- The escaping of paths in messages (the core's: control bytes and the
-- backslash as \ooo).
local function escape(s)
  return (s:gsub("[%c\\\127]", function(c) return string.format("\\%03o", c:byte()) end))
end

-- A failure in the core's form; raised as the error value (a table the
-- method turns into the message).
local Failure = {}
Failure.__index = Failure
local function fail(errno, op, p1, p2)
  local text = op
  if p1 then text = text .. " " .. escape(p1) end
  if p2 then text = text .. " " .. escape(p2) end
  error(setmetatable({ errno = errno,
    message = string.format("%s: %s (%s)", text, STRERROR[errno] or errno, errno) },
    Failure), 0)
end

--- The errno name at the end of a failure message ("... (ENOENT)"), or nil.
-- @tparam string msg
-- @treturn string|nil
function M.errno_of(msg)
  return type(msg) == "string" and msg:match("%((E[A-Z0-9]+)%)$") or nil
end

-- ---- paths -------------------------------------------------------------------

local find, sub, byte = string.find, string.sub, string.byte

local function join(dir, name)
  return dir == "/" and "/" .. name or dir .. "/" .. name
end

-- Whether path is dir or below it (both normalised, absolute).
local function is_subdir(path, dir)
  return dir == "/" or path == dir or path:sub(1, #dir + 1) == dir .. "/"
end

-- path relative to dir, as an absolute path ("/X/a" in "/X" is "/a").
local function relative(path, dir)
  if dir == "/" then return path end
  if path == dir then return "/" end
  return path:sub(#dir + 1)
end

local function parent_dir(path)
  local p = path:match("^(.*)/[^/]*$")
  return (p == nil or p == "") and "/" or p
end

-- ---- the kernel's rules, by version ------------------------------------------

-- The rules differ between the kernels the model follows. Measured (spec
-- 22 on this host, `make matrix` on Debian's 6.1 and 6.12 under qemu);
-- where the change landed between two measured kernels, the version named
-- is the release of the commit that made it, as far as we know.
-- copy_keeps_unbindable: clone_mnt copies MNT_UNBINDABLE (it was in
--   mnt_flags; 6.17 moved it out), so a namespace copy of an unbindable
--   mount is unbindable (6.1, 6.12; 6.18: private).
-- ns_list: mountinfo lists a namespace's list, not the mounts by ID (an
--   rbtree from 6.8): the copies one propagation made are committed last
--   first (attach_recursive_mnt walks its hlist, filled at the head).
-- umount_preorder: umount_tree gathers the unmounted tree with list_move
--   (before 6.8), so propagate_umount walks it in pre-order, not from the
--   deepest mount up.
-- old_umount: propagate_umount before its 6.16 rewrite
--   (Documentation/filesystems/propagate_umount.txt): candidates checked
--   one at a time (__propagate_umount), a locked one restored in place.
-- same_root_master: do_make_slave makes the mount a slave of the first
--   peer with the same root (else the next peer), its slaves appended to
--   the new master's list (6.1, 6.12; 6.18: the next peer, its slaves
--   put in front of that peer's list as one block, in their order:
--   transfer_propagation's hlist_splice_init).
-- bulk_private: umount_tree takes all its mounts out of propagation at
--   once (bulk_make_private, 6.18): each one's slaves go to the first
--   mount that stays along next peer / master (trace_transfers), handed
--   over in the order of the unmounted set, each block in front.
local OLDEST, NEWEST = { 6, 1 }, "6.18"

local function rules_of(major, minor)
  local v = major * 1000 + minor
  return { linux = major .. "." .. minor, copy_keeps_unbindable = v < 6017,
           ns_list = v < 6008, umount_preorder = v < 6008, old_umount = v < 6016,
           same_root_master = v < 6016, bulk_private = v >= 6018 }
end

-- "6.12", "6.12.118+deb12-amd64" -> 6, 12 (or nil)
local function parse_linux(s)
  local a, b, rest = s:match("^(%d+)%.(%d+)(.*)$")
  if not a or (rest ~= "" and not rest:find("^[%.%-+]")) then return nil end
  return tonumber(a), tonumber(b)
end

-- The version a world follows by default, decided when the module loads,
-- not later, since a kernel scenario's child, where a mirror or a replay
-- may make a world, has no /proc under its new root: the running kernel's
-- "MAJOR.MINOR"; the oldest rules the model has (6.1) on an older kernel
-- or one whose release it cannot read (default_note says so); off Linux
-- (no /proc) the newest.
local OLDEST_S = OLDEST[1] .. "." .. OLDEST[2]

-- Whether Linux a.b is older than the oldest rules the model has.
local function older_than_oldest(a, b)
  return a < OLDEST[1] or (a == OLDEST[1] and b < OLDEST[2])
end
local default_version, default_note = NEWEST, nil
local running_version = nil -- the running kernel's "MAJOR.MINOR" (nil off Linux)
do
  local f = io.open("/proc/sys/kernel/osrelease")
  if f then
    local release = f:read("*l") or ""
    f:close()
    local a, b = parse_linux(release)
    running_version = a and a .. "." .. b
    if not a then
      default_version = OLDEST_S
      default_note = string.format("the running kernel's release %q is not a version the model "
        .. "can read: it follows Linux %s's rules, the oldest it has", release, OLDEST_S)
    elseif older_than_oldest(a, b) then
      default_version = OLDEST_S
      default_note = string.format("the running kernel is Linux %d.%d, older than the oldest "
        .. "rules the model has: it follows Linux %s's", a, b, OLDEST_S)
    else
      default_version = a .. "." .. b
    end
  end
end

local rules_cache = {}

-- The rules of kernel version v (a string "MAJOR.MINOR[...]" from 6.1
-- on), or nil and why not (a phrase that follows "option 'linux': ").
local function linux_rules(v)
  local cached = rules_cache[v]
  if cached then return cached end
  if type(v) ~= "string" then
    return nil, "a version string such as \"6.12\" expected, got " .. type(v)
  end
  local a, b = parse_linux(v)
  if not a then
    return nil, "'" .. v .. "' is not a kernel version (MAJOR.MINOR, such as \"6.12\")"
  end
  if older_than_oldest(a, b) then
    return nil, string.format("Linux %d.%d is older than the oldest kernel the model has rules "
      .. "for (%d.%d)", a, b, OLDEST[1], OLDEST[2])
  end
  cached = rules_of(a, b)
  rules_cache[v] = cached
  return cached
end

-- The rules for opts.linux (checked: fname, argn, level) or the default.
local function rules_for(linux, fname, argn, level)
  if linux == nil then linux = default_version end
  local rules, why = linux_rules(linux)
  if not rules then argcheck.error(fname, argn, "option 'linux': " .. why, level + 1) end
  return rules
end

--- A kernel version for the `linux` option, checked: the version of its
-- rules, or nil and why not, as a phrase (`"Linux 5.15 is older than the
-- oldest kernel the model has rules for (6.1)"`) for a caller to put in
-- its own message (`mountns run --linux`, `scenario.run_problem`).
-- @param v the option's value
-- @treturn[1] string the version of the rules, "MAJOR.MINOR"
-- @return[2] nil
-- @treturn[2] string why not
function M.linux_version(v)
  local rules, why = linux_rules(v)
  if not rules then return nil, why end
  return rules.linux
end

--- The kernel version whose rules a world follows when none is given: the
-- running kernel's MAJOR.MINOR (read from /proc/sys/kernel/osrelease when
-- the module loads); on a kernel older than the oldest rules the model has
-- (`model.OLDEST_LINUX`, 6.1), or one whose release it cannot read, that
-- oldest, with a note saying so; off Linux the newest.
-- @treturn string such as "6.12"
-- @treturn ?string the note, when the version is not the running kernel's
function M.default_linux()
  return default_version, default_note
end

--- The running kernel's version, "MAJOR.MINOR" (read from
-- /proc/sys/kernel/osrelease when the module loads, so it answers in a
-- scenario's child too), or nil off Linux or when the release is not a
-- version. What a kernel namespace's `ns:linux()` returns.
-- @treturn ?string such as "6.18"
function M.running_linux()
  return running_version
end

--- The oldest and the newest kernel versions the model has rules for
-- (older ones raise; newer ones get the newest rules).
M.OLDEST_LINUX = OLDEST_S
M.NEWEST_LINUX = NEWEST

-- ---- the world ---------------------------------------------------------------

local World = {}
World.__index = World

local NEW_OPTIONS = { "linux" }

local function new_world(rules)
  return setmetatable({ uid = 0, groups = 0, devs = 0, namespaces = {},
                        events = {}, seq = 0, mounts = {}, users = 0,
                        user_parent = {}, rules = rules, linux = rules.linux }, World)
end

--- A fresh world: no namespaces yet (`world:namespace()` makes the first).
-- @tparam[opt] table opts `linux`: the kernel version whose rules it
-- follows ("6.1", "6.12", "6.18", or any "MAJOR.MINOR[...]" from 6.1 on;
-- newer than the newest known: the newest rules; default
-- `model.default_linux()`, the running kernel's)
-- @treturn table the world: `events` (the history), `namespaces` (in
-- creation order), `linux` (the version of its rules, "MAJOR.MINOR")
function M.new(opts)
  opts = argcheck.options(opts, "model.new", 1, NEW_OPTIONS, 2)
  return new_world(rules_for(opts.linux, "model.new", 1, 2))
end

local function next_uid(w)
  w.uid = w.uid + 1
  return w.uid
end

local function new_group(w)
  w.groups = w.groups + 1
  return { id = w.groups, ring = {} }
end

local function new_sb(w, fstype, source, super, user)
  w.devs = w.devs + 1
  return { dev = w.devs, fstype = fstype, source = source, super_options = super,
           user = user, ro = false,
           nodes = { ["/"] = { dir = true } } }
end

-- the record of an event (see the module's doc and MODEL-CONTRACT.md)
local function event(w, e)
  w.seq = w.seq + 1
  e.seq = w.seq
  w.events[#w.events + 1] = e
  return e
end

local function label_of(ns)
  return ns and ns.label_ or "?"
end

-- ---- mounts --------------------------------------------------------------------

-- A mount: sb, root (a path in sb), parent (a mount), mp (the mount point: a
-- path in the parent's sb), ns, children (attach order), flags, group
-- ({id, ring}), master (a mount), slaves (list), unbindable, locked.
-- children and slaves start as this shared empty list, replaced by a list
-- of the mount's own before the first insertion (most mounts have none)
local NONE = setmetatable({}, { __newindex = function() error("model: NONE is shared", 2) end })

local function new_mount(w, sb, root, flags)
  local uid = w.uid + 1
  w.uid = uid
  -- (the nil fields size the table for what the mount gets later: no
  -- rehash as parent, mp, ns... arrive)
  local m = { uid = uid, sb = sb, root = root, children = NONE, slaves = NONE,
              flags = flags, unbindable = false, locked = false, parent = nil, mp = nil,
              ns = nil, group = nil, master = nil, lock_flags = nil, tgen_ = nil, tgt_ = nil }
  local mounts = w.mounts
  mounts[#mounts + 1] = m
  return m
end

local function copy_flags(f)
  local c = {}
  for k, v in pairs(f) do c[k] = v end
  return c
end

local function index_of(list, v)
  for i, x in ipairs(list) do if x == v then return i end end
  return nil
end

local function remove_value(list, v)
  local i = index_of(list, v)
  if i then table.remove(list, i) end
end

-- join m to the group of old, right after old in its ring
local function join_group(m, old, g)
  g = g or old.group
  m.group = g
  local i = index_of(g.ring, old)
  table.insert(g.ring, i and i + 1 or #g.ring + 1, m)
end

local function set_shared(w, m)
  if not m.group then
    m.group = new_group(w)
    m.group.ring[1] = m
  end
  m.unbindable = false
end

local function set_master(m, master, after)
  m.master = master
  if not master then return end
  if master.slaves == NONE then master.slaves = {} end
  local i = after and index_of(master.slaves, after)
  table.insert(master.slaves, i and i + 1 or 1, m)
end

-- The mount's mount point as a path in its namespace; cache (optional):
-- mount -> target, for a whole table at once.
local function target_of(m, cache)
  if not m.parent then return "/" end
  local t = cache and cache[m]
  if t then return t end
  local p = target_of(m.parent, cache)
  local rel = relative(m.mp, m.parent.root)
  if rel == "/" then t = p else t = p == "/" and rel or p .. rel end
  if cache then cache[m] = t end
  return t
end
M.target_of = target_of

-- The path in m's namespace of the path mp of m's superblock.
local function target_at(m, mp)
  local t, rel = target_of(m), relative(mp, m.root)
  if rel == "/" then return t end
  return t == "/" and rel or t .. rel
end

-- clone_mnt: a copy of old with root `root`, by the clone flags of
-- fs/namespace.c: slave (a slave of old), make_shared (a peer of old, or a
-- new group for a slave copy), shared_to_slave (a shared old gives a
-- slave), unprivileged (the flags old has are locked); ns: the namespace
-- the copy goes to (bind, whose copy is attached right away), else nil.
local function clone(w, old, root, fl)
  -- (a flags table is never changed in place: copies share it)
  local m = new_mount(w, old.sb, root, old.flags)
  m.ns = fl.ns -- (nil: set when the copy is attached)
  m.locked = old.locked
  -- a copy is never unbindable (an unbindable mount copied by unshare
  -- gives a private one: spec 22 "unshare copies unbindable mounts"),
  -- unless the flag is still in mnt_flags (rules.copy_keeps_unbindable)
  if old.unbindable and w.rules.copy_keeps_unbindable then m.unbindable = true end
  m.lock_flags = old.lock_flags
  if fl.slave or (fl.shared_to_slave and old.group) then
    set_master(m, old)
  else
    if fl.make_shared or old.group then join_group(m, old, old.group or old.pending) end
    if old.master then set_master(m, old.master, old) end
  end
  if fl.make_shared and not m.group then set_shared(w, m) end
  if m.group then m.unbindable = false end
  if fl.unprivileged then
    local lf = old.lock_flags and copy_flags(old.lock_flags) or {}
    for k, v in pairs(m.flags) do if v == true then lf[k] = true end end
    lf.atime = true
    m.lock_flags = lf
  end
  return m
end

-- The mounts of the tree under m (m first), pre-order, children in attach
-- order (next_mnt).
local function subtree(m, out)
  out = out or {}
  out[#out + 1] = m
  for _, c in ipairs(m.children) do subtree(c, out) end
  return out
end

-- m and the mounts under it go to namespace ns
local function set_ns(m, ns)
  m.ns = ns
  for _, c in ipairs(m.children) do set_ns(c, ns) end
end

local function attach_child(parent, m, mp)
  m.parent, m.mp = parent, mp
  if parent.children == NONE then parent.children = {} end
  parent.children[#parent.children + 1] = m
end

local function detach_child(m)
  if m.parent then remove_value(m.parent.children, m) end
  m.parent, m.mp = nil, nil
end

-- copy_tree: copies of m (root `root`) and of the mounts under it whose
-- mount point is under root, in pre-order; unbindable ones (and what is
-- under them) pruned unless fl.copy_unbindable.
-- copy_tree's walk: copies of the mounts under from attached to to (no
-- closure: LuaJIT does not compile the making of one)
local function copy_walk(w, src, root, fl, from, to)
  for _, c in ipairs(from.children) do
    if from ~= src or is_subdir(c.mp, root) then
      if c.unbindable and not fl.copy_unbindable then
        -- pruned with what is under it
        local _ = nil -- luacheck: ignore
      else
        local q = clone(w, c, c.root, fl)
        attach_child(to, q, c.mp)
        copy_walk(w, src, root, fl, c, q)
      end
    end
  end
end

local function copy_tree(w, src, root, fl)
  local res = clone(w, src, root, fl)
  copy_walk(w, src, root, fl, src, res)
  return res
end

-- The mount on parent at mount point mp (the last attached), or nil.
local function child_at(parent, mp)
  local found
  for _, c in ipairs(parent.children) do
    if c.mp == mp then found = c end
  end
  return found
end

-- ---- propagation ---------------------------------------------------------------

-- The ring of m's group starting at m (just m when not shared).
local function ring_from(m)
  if not m.group then return { m } end
  local ring = m.group.ring
  local i = index_of(ring, m) or 1
  local out = {}
  for k = 0, #ring - 1 do out[#out + 1] = ring[(i - 1 + k) % #ring + 1] end
  return out
end

-- The mounts that receive propagation from dest, in the kernel's order
-- (propagate_mnt: the peers of dest after it in the ring, then every slave
-- group depth first, each from the slave met first, the whole ring): a
-- list of mounts, dest not included.
local function receivers(dest)
  local out, seen = {}, {}
  local function key(m) return m.group or m end
  seen[key(dest)] = true
  local r = ring_from(dest)
  for i = 2, #r do out[#out + 1] = r[i] end
  local function slaves_of(rep)
    for _, x in ipairs(ring_from(rep)) do
      for _, s in ipairs(x.slaves) do
        if not seen[key(s)] then
          seen[key(s)] = true
          for _, y in ipairs(ring_from(s)) do out[#out + 1] = y end
          slaves_of(s)
        end
      end
    end
  end
  slaves_of(dest)
  return out
end
M.receivers = receivers

local function same_group(a, b)
  return a == b or (a.group ~= nil and a.group == b.group)
end

-- attach_recursive_mnt: attach the tree `source` (already copied, or a
-- mount being moved) to dest at mp in ns, propagating copies to dest's
-- peers and slaves when dest is shared. ctx: {ns = the caller's, call =
-- text, moving = true}.
local function attach(w, source, dest, mp, ctx)
  local tree = {}
  local ranges = {} -- the copies' places in w.mounts, one range a tree
  if dest.group then
    for _, m in ipairs(subtree(source)) do
      if not m.group then
        m.pending = new_group(w)
        m.pending.ring[1] = m
      end
    end
    local last = {}          -- group -> the copy made last for it
    last[dest.group] = source
    -- the copies made here are skipped (IS_MNT_NEW); a mount being moved
    -- is still in its namespace: it receives a copy too (quiz A)
    local new = {}
    if not ctx.moving then
      for _, m in ipairs(subtree(source)) do new[m] = true end
    end
    for _, m in ipairs(receivers(dest)) do
      if new[m] or not m.ns or m.ns.closed then
        -- a copy made by this propagation, or a mount of no namespace
        local _ = nil -- luacheck: ignore
      elseif not is_subdir(mp, m.root) then
        event(w, { ns = label_of(m.ns), call = ctx.call, kind = "blocked",
                   target = target_of(m), from_ns = label_of(ctx.ns),
                   via = m.group == dest.group and ("peer group " .. dest.group.id)
                     or ("master " .. (m.master and m.master.group and m.master.group.id or "?")),
                   rule = "the mount point is outside the root of " .. target_of(m)
                     .. " in " .. label_of(m.ns) .. ": no copy" })
      else
        local src, fl
        if same_group(m, dest) then
          src, fl = last[dest.group], { make_shared = true }
        elseif m.group and last[m.group] then
          src, fl = last[m.group], { make_shared = true }
        else
          local n = m
          while true do
            local p = n.master
            if not p then break end
            if same_group(p, dest) then src = last[dest.group]; break end
            if p.group and last[p.group] then src = last[p.group]; break end
            n = p
          end
          src = src or last[dest.group]
          fl = { slave = true, make_shared = m.group ~= nil }
        end
        fl.unprivileged = m.ns.user ~= ctx.ns.user
        local first = #w.mounts + 1
        local child = copy_tree(w, src, src.root, fl)
        ranges[#ranges + 1] = { first, #w.mounts }
        for _, c in ipairs(subtree(child)) do new[c] = true end
        child.parent, child.mp = m, mp
        if m.group then last[m.group] = child end
        tree[#tree + 1] = child
        local via, rule
        if same_group(m, dest) then
          via = "peer group " .. dest.group.id
          rule = "a peer of the mount the call attached to"
        else
          local g = m.master.group and m.master.group.id or "?"
          via = "master " .. g
          rule = "a slave of peer group " .. g .. ": it receives what that group propagates"
        end
        event(w, { ns = label_of(m.ns), call = ctx.call, kind = "propagated",
                   target = target_at(m, mp),
                   via = via, from_ns = label_of(ctx.ns), rule = rule })
      end
    end
    for _, m in ipairs(subtree(source)) do
      if m.pending then
        m.group, m.pending = m.pending, nil
        m.unbindable = false
      end
    end
  elseif ctx.call then
    local t = target_of(dest)
    if dest.master then
      event(w, { ns = label_of(ctx.ns), call = ctx.call, kind = "blocked", target = t,
                 from_ns = label_of(ctx.ns),
                 rule = t .. " is a slave, not shared, in " .. label_of(ctx.ns)
                   .. ": a slave receives propagation but does not send it" })
    else
      event(w, { ns = label_of(ctx.ns), call = ctx.call, kind = "blocked", target = t,
                 from_ns = label_of(ctx.ns),
                 rule = t .. " is private in " .. label_of(ctx.ns) .. ": no propagation" })
    end
  end
  if ctx.moving then detach_child(source) end
  attach_child(dest, source, mp)
  -- (a tree copied for this namespace has it already: copy_tree's fl.ns)
  if source.ns ~= ctx.ns then set_ns(source, ctx.ns) end
  for _, child in ipairs(tree) do
    local m, cmp = child.parent, child.mp
    -- a copy into a less privileged namespace: locked, but its root
    -- (before the tuck below: what goes on top is not locked)
    if m.ns.user ~= ctx.ns.user then
      for _, c in ipairs(subtree(child)) do c.locked = true end
    end
    child.locked = false
    local q = child_at(m, cmp)
    child.parent = nil
    attach_child(m, child, cmp)
    if q then
      -- the copy goes under what is mounted there (mnt_change_mountpoint)
      detach_child(q)
      attach_child(child, q, child.root)
    end
    set_ns(child, m.ns)
  end
  if w.rules.ns_list and #ranges > 1 then
    -- listed in the namespace list's order: the copies were committed
    -- last first (see rules_of)
    local mounts, out = w.mounts, {}
    for i = #ranges, 1, -1 do
      for j = ranges[i][1], ranges[i][2] do out[#out + 1] = mounts[j] end
    end
    for k, m in ipairs(out) do mounts[ranges[1][1] + k - 1] = m end
  end
end

-- do_make_slave: m leaves its group (its slaves go to a peer with the same
-- root, else the next peer, else to m's master; with none, they become
-- private) and becomes a slave of that peer or of its master.
local function make_slave(m, rules)
  local master
  if m.group and #m.group.ring > 1 then
    local r = ring_from(m)
    -- the next peer (Linux 6.18: not the first peer with the same root,
    -- which older kernels preferred: rules.same_root_master; spec 22
    -- "make-rslave of binds")
    master = r[2]
    if rules.same_root_master then
      for i = 2, #r do
        if r[i].root == m.root then master = r[i]; break end
      end
    end
    remove_value(m.group.ring, m)
    m.group = nil
  else
    m.group = nil
    master = m.master
    if not master then
      for _, s in ipairs(m.slaves) do s.master = nil end
      m.slaves = NONE
      return
    end
  end
  if m.master then remove_value(m.master.slaves, m) end
  if master.slaves == NONE then master.slaves = {} end
  if rules.same_root_master then
    -- m first in the new master's list, its slaves appended at the end
    for _, s in ipairs(m.slaves) do
      s.master = master
      master.slaves[#master.slaves + 1] = s
    end
  else
    -- m's slaves go to the front of the new master's list, one block in
    -- their order (spec 22 "a mount made private hands its slaves over
    -- as one block")
    local block = m.slaves
    for i = #block, 1, -1 do
      block[i].master = master
      table.insert(master.slaves, 1, block[i])
    end
  end
  table.insert(master.slaves, 1, m)
  m.slaves = NONE
  m.master = master
end

local function change_propagation(w, m, kind)
  if kind == "shared" then
    set_shared(w, m)
    return
  end
  make_slave(m, w.rules)
  if kind ~= "slave" then
    if m.master then remove_value(m.master.slaves, m) end
    m.master = nil
    m.unbindable = kind == "unbindable"
  end
end

-- ---- namespaces ----------------------------------------------------------------

--- The class of model namespaces (`model.Namespace`): the methods of
-- `mountns.namespace`'s class, on the model.
-- @type Space
local Space = {}
Space.__index = Space
M.Namespace = Space

local function is_ns(v)
  return getmetatable(v) == Space
end

--- Whether v is a model namespace.
-- @return boolean
M.is_namespace = is_ns

local function check_open(ns, name)
  argcheck.self(ns, is_ns(ns), name, 3)
end

local function new_ns(w, root, label, user)
  local ns = setmetatable({ world = w, root = root, serial = #w.namespaces + 1,
                            user = user, closed = false,
                            root_parent = next_uid(w) }, Space)
  ns.label_ = label or ("ns" .. ns.serial)
  w.namespaces[#w.namespaces + 1] = ns
  for _, m in ipairs(subtree(root)) do m.ns = ns end
  return ns
end

local NAMESPACE_OPTIONS = { "label", "locked_root" }

-- a new mount's flags (a fresh table: options_text remembers its text in it)
local function default_flags()
  return { ro = false, nosuid = false, nodev = false, noexec = false,
           atime = "relatime", nodiratime = false, nosymfollow = false, text_ = nil }
end

--- The first namespace of a world: its `/` a fresh tmpfs, private, as a
-- kernel scenario's is.
-- @tparam[opt] table opts `label`; `locked_root = true`: its `/` is locked,
-- as an unprivileged caller's scenario's is (the scenario's namespace is a
-- less privileged copy, made in a user namespace, and pivot_root hands the
-- old root's lock to the new root: doc/kernel-vs-docs.md 4), so moving
-- `/` gives EINVAL there, not ELOOP, and its copies keep the lock
-- @treturn Space
function World:namespace(opts)
  opts = argcheck.options(opts, "world:namespace", 1, NAMESPACE_OPTIONS, 2)
  if opts.locked_root ~= nil and type(opts.locked_root) ~= "boolean" then
    argcheck.error("world:namespace", 1, "option 'locked_root' must be a boolean, got "
      .. type(opts.locked_root), 2)
  end
  self.users = self.users + 1
  local sb = new_sb(self, "tmpfs", "mountns", "rw,mode=755", self.users)
  local root = new_mount(self, sb, "/", default_flags())
  root.locked = opts.locked_root or false
  return new_ns(self, root, opts.label, self.users)
end

-- Path lookup crossing mount points at dpath of mnt (node: dpath's): the
-- mount on top of the stack there, its root and the root's node (mnt,
-- dpath, node themselves when nothing is mounted there).
local function follow(mnt, dpath, node)
  while true do
    local child = child_at(mnt, dpath)
    if not child then return mnt, dpath, node end
    mnt, dpath = child, child.root
    node = mnt.sb.nodes[dpath]
  end
end

-- Resolve path in ns: the mount and the path in its superblock that path
-- lookup reaches (following mounts at every component), or raise errno
-- for op. Returns mnt, dpath, node. With mk (a boolean: mkdir's
-- `parents`), path is mkdir's (walkpath's): what is missing on the way is
-- made, as mkdir -p does (mk true) or mkdir(2) the last component only,
-- and a last component there already is EEXIST unless mk and a directory.
local function resolve(ns, path, op, p1, p2, mk)
  local mnt, dpath = ns.root, ns.root.root
  local node = mnt.sb.nodes[dpath]
  -- the components of path, without a list
  local i, n = 2, #path
  while i <= n do
    local j = find(path, "/", i, true) or n + 1
    local c = sub(path, i, j - 1)
    i = j + 1
    if c ~= "" then
      if not node.dir then fail("ENOTDIR", op, p1, p2) end
      local next_path = join(dpath, c)
      local nodes = mnt.sb.nodes
      node = nodes[next_path]
      if not node then
        if mk == nil or (i <= n and not mk) then fail("ENOENT", op, p1, p2) end
        if mnt.flags.ro or mnt.sb.ro then fail("EROFS", op, p1, p2) end
        node = { dir = true }
        nodes[next_path] = node
      elseif mk ~= nil and i > n and not (mk and node.dir) then
        fail("EEXIST", op, p1, p2)
      end
      mnt, dpath, node = follow(mnt, next_path, node)
    end
  end
  return mnt, dpath, node
end

-- A method: checks self, runs body(self, ...) and turns a failure into the
-- core's message, raised at the caller's line.
-- (the body's result passes through as varargs: no table a call)
local function method(name, body)
  local function finish(self, ok, ...)
    if ok then return ... end
    local e = ...
    if getmetatable(e) == Failure then
      event(self.world, { ns = self.label_, call = self.world.current_call, kind = "error",
                          rule = e.message })
      error(e.message, 3)
    end
    -- an argument check: raised at the caller's line, as the core's
    local why = type(e) == "string" and e:match("^[^\n]-:%d+: (bad argument #.*)$")
    if why then error(why, 3) end
    error(e, 3)
  end
  return function(self, ...)
    check_open(self, name)
    -- (not a tail call: finish's error levels count this frame; every
    -- body returns one value)
    local r = finish(self, pcall(body, self, ...))
    return r
  end
end

-- ---- argument checks with the core's wording ----------------------------------

local MOUNT_FLAGS = {
  ro = { "ro", true }, rw = { "ro", false },
  nosuid = { "nosuid", true }, suid = { "nosuid", false },
  nodev = { "nodev", true }, dev = { "nodev", false }, noexec = { "noexec", true },
  exec = { "noexec", false }, sync = {}, async = {}, dirsync = {}, mand = {}, nomand = {},
  silent = {}, loud = {}, relatime = { "atime", "relatime" }, norelatime = {},
  noatime = { "atime", "noatime" }, atime = {}, strictatime = { "atime", "strictatime" },
  nodiratime = { "nodiratime", true }, diratime = {}, lazytime = {}, nolazytime = {},
  nosymfollow = { "nosymfollow", true }, symfollow = {},
  shared = { prop = "shared" }, rshared = { prop = "shared", rec = true },
  private = { prop = "private" }, rprivate = { prop = "private", rec = true },
  slave = { prop = "slave" }, rslave = { prop = "slave", rec = true },
  unbindable = { prop = "unbindable" }, runbindable = { prop = "unbindable", rec = true },
  bind = { op = "bind" }, rbind = { op = "bind", rec = true }, move = { op = "move" },
  remount = { op = "remount" },
}
local UMOUNT_FLAGS = { force = true, detach = true, lazy = true, expire = true, nofollow = true }

-- flags as the core reads them: nil, "a,b", {"a", "b"}, {a = true}; a list
-- of names
local NO_FLAGS = setmetatable({}, { __newindex = function() error("model: NO_FLAGS", 2) end })

-- the names of one comma string s of flags, appended to names (no
-- closure: LuaJIT does not compile the making of one)
local function flag_names(s, set, fname, argn, names)
  -- "" is no flag; an empty name in a list is a typo (as in csrc/args.c)
  if s ~= "" and (s:find(",,", 1, true) or s:sub(1, 1) == "," or s:sub(-1) == ",") then
    argcheck.error(fname, argn, "empty flag name in '" .. s:gsub("%z.*", "") .. "'", 4)
  end
  for n in s:gmatch("[^,]+") do
    if not set[n] then
      argcheck.error(fname, argn, "unknown flag '" .. n:gsub("%z", "\\0") .. "'", 4)
    end
    names[#names + 1] = n
  end
end

local function check_flags(flags, set, fname, argn)
  if flags == nil then return NO_FLAGS end -- (the callers only read it)
  local names = {}
  if type(flags) == "string" then
    flag_names(flags, set, fname, argn, names)
  elseif type(flags) == "table" then
    for i = 1, #flags do
      if type(flags[i]) ~= "string" then
        argcheck.error(fname, argn, string.format("flag #%d is a %s, expected a string",
          i, type(flags[i])), 4)
      end
      flag_names(flags[i], set, fname, argn, names)
    end
    for k, v in pairs(flags) do
      if not (type(k) == "number" and k >= 1 and k <= #flags and k % 1 == 0) then
        if type(k) ~= "string" then
          argcheck.error(fname, argn, string.format("unexpected key %s (%s): flags are a "
            .. "list of names or a set {name = true}", tostring(k), type(k)), 4)
        end
        if not set[k] then argcheck.error(fname, argn, "unknown flag '" .. k .. "'", 4) end
        if type(v) ~= "boolean" then
          argcheck.error(fname, argn, string.format("flag '%s' must be true or false, got %s",
            k, type(v)), 4)
        end
        if v then names[#names + 1] = k end
      end
    end
  elseif type(flags) == "number" then
    error("ns:" .. fname:gsub("^ns:", "") .. ": raw flag bits are not available in the model", 4)
  else
    argcheck.error(fname, argn, "flags expected (comma string, list or set of names), got "
      .. type(flags), 4)
  end
  return names
end

-- (nil gives a shared empty table: the callers only read it)
local NO_OPTIONS = setmetatable({}, { __newindex = function() error("model: NO_OPTIONS", 2) end })
local RECURSIVE, BIND = { recursive = "boolean" }, { bind = "boolean" }

local function check_keys(opts, known, fname, argn)
  if opts == nil then return NO_OPTIONS end
  if type(opts) ~= "table" then
    argcheck.error(fname, argn, "table expected, got " .. type(opts), 4)
  end
  for k in pairs(opts) do
    if type(k) ~= "string" then
      argcheck.error(fname, argn, "option keys must be strings, got " .. type(k), 4)
    end
    if not known[k] then argcheck.error(fname, argn, "unknown option '" .. k .. "'", 4) end
  end
  for k, v in pairs(opts) do
    if type(v) ~= "boolean" and known[k] == "boolean" then
      argcheck.error(fname, argn, string.format("option '%s' must be a boolean, got %s",
        k, type(v)), 4)
    end
  end
  return opts
end

local function opt_string(v, fname, argn, what)
  if v == nil then return nil end
  if type(v) == "number" then return tostring(v) end
  if type(v) ~= "string" then
    argcheck.error(fname, argn, "string expected, got " .. type(v), 4)
  end
  if v:find("\0", 1, true) then argcheck.error(fname, argn, what .. " contains a NUL byte", 4) end
  return v
end

local function check_path(p, fname, argn)
  if type(p) ~= "string" then -- (a number is not a path: the core's lmns_checkpath)
    argcheck.error(fname, argn, "string expected, got " .. (p == nil and "no value" or type(p)), 4)
  end
  if p:find("\0", 1, true) then argcheck.error(fname, argn, "path contains a NUL byte", 4) end
  return p
end

-- a path as the kernel walks it (lexically: the model has no symlinks);
-- p is a checked path (check_path: a string without NUL)
local function walkpath(p)
  if byte(p, 1) ~= 47 then -- "/"
    p = "/" .. p
  elseif not (find(p, "/.", 1, true) or find(p, "//", 1, true))
         and (byte(p, -1) ~= 47 or #p == 1) then
    return p -- normal already (no "//", no "." or ".." step, no trailing "/")
  end
  return mtable.normpath(p)
end

-- ---- the operations ------------------------------------------------------------

local function set_call(ns, text, target, source)
  ns.world.current_call = text
  -- target, source: the paths of the call, for explain (the text cannot
  -- be split where a path holds a space)
  event(ns.world, { ns = ns.label_, call = text, kind = "call", target = target,
                    source = source })
end

-- mount flags -> the mount's flags table (do_mount's per-mount part)
local function mount_flags_of(names, old)
  local f = default_flags()
  local atime_given = false
  for _, n in ipairs(names) do
    local d = MOUNT_FLAGS[n]
    if d[1] then
      f[d[1]] = d[2]
      if d[1] == "atime" then atime_given = true end
    end
    if n == "nodiratime" or n == "noatime" or n == "relatime" or n == "strictatime" then
      atime_given = true
    end
  end
  if old and not atime_given then
    f.atime, f.nodiratime = old.atime, old.nodiratime
  end
  return f
end

local function options_text(f)
  if f.text_ then return f.text_ end
  local out = { f.ro and "ro" or "rw" }
  if f.nosuid then out[#out + 1] = "nosuid" end
  if f.nodev then out[#out + 1] = "nodev" end
  if f.noexec then out[#out + 1] = "noexec" end
  if f.atime == "noatime" then out[#out + 1] = "noatime" end
  if f.nodiratime then out[#out + 1] = "nodiratime" end
  if f.atime == "relatime" then out[#out + 1] = "relatime" end
  if f.nosymfollow then out[#out + 1] = "nosymfollow" end
  f.text_ = table.concat(out, ",")
  return f.text_
end

-- whether m is the root of its mount (a path at it names the mount itself)
local function mount_root(mnt, dpath)
  return dpath == mnt.root
end

local function check_dir_match(src_node, dst_node, op, p1, p2)
  if (src_node.dir and true or false) ~= (dst_node.dir and true or false) then
    fail("ENOTDIR", op, p1, p2)
  end
end

-- make-[r]X on the mount at path
local function change_type(ns, path, kind, rec, op)
  local mnt, dpath = resolve(ns, walkpath(path), op, path)
  if not mount_root(mnt, dpath) then fail("EINVAL", op, path) end
  local w = ns.world
  local list = rec and subtree(mnt) or { mnt }
  for _, m in ipairs(list) do change_propagation(w, m, kind) end
end

local PROP_OPS = { shared = { "make-shared", "make-rshared" },
                   private = { "make-private", "make-rprivate" },
                   slave = { "make-slave", "make-rslave" },
                   unbindable = { "make-unbindable", "make-runbindable" } }

for kind, names in pairs(PROP_OPS) do
  local fname = "make_" .. kind
  local qname = "ns:" .. fname
  Space[fname] = method(fname, function(self, path, opts)
    path = check_path(path, qname, 1)
    opts = check_keys(opts, RECURSIVE, qname, 2)
    local op = opts.recursive and names[2] or names[1]
    set_call(self, op .. " " .. path, path)
    change_type(self, path, kind, opts.recursive, op)
    return true
  end)
end

local function new_mount_op(ns, source, target, fstype, names, data)
  local op, p1, p2 = "mount", source, target
  local mnt, dpath, node = resolve(ns, walkpath(target), op, p1, p2)
  if not fstype then fail("EINVAL", op, p1, p2) end
  local w = ns.world
  if fstype ~= "tmpfs" and fstype ~= "ramfs" then
    local known = { proc = true, sysfs = true, devpts = true, mqueue = true, ext4 = true,
                    xfs = true, btrfs = true, overlay = true, cgroup2 = true, fuse = true }
    if known[fstype] then
      error("ns:mount: filesystem type '" .. fstype .. "' is not available in the model", 0)
    end
    fail("ENODEV", op, p1, p2)
  end
  if not node.dir then fail("ENOTDIR", op, p1, p2) end
  local super = "rw"
  if data and data ~= "" then super = super .. "," .. data end
  local sb = new_sb(w, fstype, source, super, ns.user)
  local m = new_mount(w, sb, "/", mount_flags_of(names))
  attach(w, m, mnt, dpath, { ns = ns, call = w.current_call })
end

local function bind_op(ns, source, target, rec)
  local op = rec and "rbind" or "bind"
  local smnt, sdpath, snode = resolve(ns, walkpath(source), op, source, target)
  local dmnt, ddpath, dnode = resolve(ns, walkpath(target), op, source, target)
  if smnt.unbindable then fail("EINVAL", op, source, target) end
  if not rec then
    for _, c in ipairs(smnt.children) do
      if c.locked and is_subdir(c.mp, sdpath) then fail("EINVAL", op, source, target) end
    end
  end
  check_dir_match(snode, dnode, op, source, target)
  local w = ns.world
  local copy
  if rec then
    copy = copy_tree(w, smnt, sdpath, { ns = ns })
  else
    copy = clone(w, smnt, sdpath, { ns = ns })
  end
  copy.locked = false -- the copied mounts under it keep their locks
  attach(w, copy, dmnt, ddpath, { ns = ns, call = w.current_call })
end

local function tree_has_unbindable(m)
  for _, x in ipairs(subtree(m)) do if x.unbindable then return true end end
  return false
end

local function move_op(ns, from, to)
  local op = "move"
  local omnt, odpath, onode = resolve(ns, walkpath(from), op, from, to)
  local pmnt, pdpath, pnode = resolve(ns, walkpath(to), op, from, to)
  -- a namespace's root counts as attached (a scenario's root sits on the
  -- detached root it was pivoted from): moving it gives ELOOP below
  if omnt.locked then fail("EINVAL", op, from, to) end
  if not mount_root(omnt, odpath) then fail("EINVAL", op, from, to) end
  check_dir_match(onode, pnode, op, from, to)
  if omnt.parent and omnt.parent.group then fail("EINVAL", op, from, to) end
  if pmnt.group and tree_has_unbindable(omnt) then fail("EINVAL", op, from, to) end
  local p = pmnt
  while p do
    if p == omnt then fail("ELOOP", op, from, to) end
    p = p.parent
  end
  local w = ns.world
  attach(w, omnt, pmnt, pdpath, { ns = ns, call = w.current_call, moving = true })
end

-- bulk_make_private (rules.bulk_private): the mounts of list (the
-- unmounted set, in umount_tree's order) leave their peer groups and
-- masters; trace_transfers: each one's slaves go to its next peer, else
-- its master, followed past the mounts of the set to the first that
-- stays (or nowhere: private); then, in the set's order, each one's
-- slaves go in front of that mount's list as one block.
local function bulk_make_private(list)
  local inset, dest = {}, {}
  for _, m in ipairs(list) do inset[m] = true end
  for _, m in ipairs(list) do
    if dest[m] == nil then
      local chain, x, d = {}, m
      while true do
        local nx
        local g = x.group
        if g and #g.ring > 1 then
          local ring = g.ring
          nx = ring[index_of(ring, x) % #ring + 1]
          remove_value(ring, x)
        else
          nx = x.master
        end
        x.group = nil
        if x.master then remove_value(x.master.slaves, x) end
        x.master = nil
        chain[#chain + 1] = x
        dest[x] = false
        if not nx or not inset[nx] then d = nx; break end
        if dest[nx] ~= nil then d = dest[nx] or nil; break end
        x = nx
      end
      for _, c in ipairs(chain) do dest[c] = d or false end
    end
  end
  for _, m in ipairs(list) do
    local d, block = dest[m], m.slaves
    for i = #block, 1, -1 do
      local s = block[i]
      s.master = d or nil
      if d then
        if d.slaves == NONE then d.slaves = {} end
        table.insert(d.slaves, 1, s)
      end
    end
    m.slaves = NONE
  end
end

-- take the mounts in set out of their namespace (umount_tree): each leaves
-- its peer group (its slaves handed on) and its parent
local function take_out(w, list, ctx)
  if w.rules.bulk_private then
    bulk_make_private(list)
  else
    for _, m in ipairs(list) do
      change_propagation(w, m, "private")
    end
  end
  for _, m in ipairs(list) do
    event(w, { ns = label_of(m.ns), call = ctx.call, kind = "removed", target = target_of(m),
               via = m.why_via, from_ns = label_of(ctx.ns), rule = m.why or "unmounted" })
    m.why_via = nil
  end
  for _, m in ipairs(list) do
    detach_child(m)
    m.ns = nil
  end
end

-- ---- umount before Linux 6.16 (rules.old_umount) ------------------------------

-- next_peer: the mount after m in its peer group's ring (m when alone)
local function next_peer(m)
  local g = m.group
  if not g then return m end
  local ring = g.ring
  return ring[index_of(ring, m) % #ring + 1]
end

-- IS_MNT_NEW: a mount of no namespace
local function is_new(m)
  return not m.ns or m.ns.closed
end

-- propagation_next: the mount after m in a walk of the propagation tree
-- of origin (its peers, their slaves, depth first), or nil at the end
local function propagation_next(m, origin)
  if not is_new(m) and #m.slaves > 0 then return m.slaves[1] end
  while true do
    local master = m.master
    if master == origin.master then
      local nx = next_peer(m)
      if nx == origin then return nil end
      return nx
    end
    local list = master.slaves
    local i = index_of(list, m)
    if i and i < #list then return list[i + 1] end
    m = master
  end
end

-- skip_propagation_subtree: where the walk goes on without m's slaves
-- (but the last one's own slaves: the kernel's walk resumes there)
local function skip_propagation_subtree(m)
  if not is_new(m) and #m.slaves > 0 then return m.slaves[#m.slaves] end
  return m
end

-- umount_tree with propagate_umount as they were before Linux 6.16: the
-- unmounted tree (list, pre-order) leaves its parents' lists first; for
-- each of its mounts, the mount at its mount point in every mount that
-- receives propagation from its parent is a candidate, unmounted when
-- nothing but an over-mount of its root (or a locked candidate) is
-- mounted on it and it is not locked; a locked one, or one with mounts
-- on it, stays (restored, its parent rechecked when a child went); what
-- is mounted on an unmounted candidate goes too, but an over-mount of
-- its root, which is reparented to where the candidate was.
local function old_umount(w, ns, mnt, list)
  local rules = w.rules
  -- propagate_mount_unlock: the copies at mnt's mount point are unlocked
  local top = mnt.parent
  local r = propagation_next(top, top)
  while r do
    local c = child_at(r, mnt.mp)
    if c then c.locked = false end
    r = propagation_next(r, top)
  end
  local gone, hidden = {}, {} -- MNT_UMOUNT; detached but still hashed
  for _, m in ipairs(list) do gone[m] = true end
  for _, m in ipairs(list) do
    remove_value(m.parent.children, m)
    hidden[#hidden + 1] = m
  end
  local function lookup(parent, mp)
    local c = child_at(parent, mp)
    if c then return c end
    for i = #hidden, 1, -1 do
      local h = hidden[i]
      if h.parent == parent and h.mp == mp then return h end
    end
    return nil
  end
  local where, marked = {}, {} -- mnt_umounting: "visited" or "restore"; MNT_MARKED
  local to_restore, to_umount = {}, {}
  local function restore(c)
    if where[c] == "restore" then remove_value(to_restore, c) end
    where[c] = "restore"
    to_restore[#to_restore + 1] = c
  end
  local function umount_one(c, why)
    marked[c] = nil
    gone[c] = true
    remove_value(c.parent.children, c)
    hidden[#hidden + 1] = c
    if where[c] == "restore" then remove_value(to_restore, c) end
    where[c] = nil
    c.why = why
    to_umount[#to_umount + 1] = c
  end
  -- __propagate_umount: whether c was marked (progress)
  local function try(c)
    if gone[c] or marked[c] then return false end
    for _, k in ipairs(c.children) do
      if k.mp ~= c.root and not (where[k] and marked[k]) then
        restore(c) -- something stays mounted on it
        return false
      end
    end
    marked[c] = true
    if c.locked then
      restore(c)
    else
      umount_one(c, "a copy at the same mount point in a mount that receives propagation "
        .. "from the parent: unmounted with it")
    end
    return true
  end
  local order = {}
  for i = 1, #list do
    order[i] = rules.umount_preorder and list[i] or list[#list + 1 - i]
  end
  for _, x in ipairs(order) do
    if not where[x] then
      where[x] = "visited"
      local parent = x.parent
      local m = propagation_next(parent, parent)
      while m do
        local c = lookup(m, x.mp)
        if c then
          if where[c] then
            m = skip_propagation_subtree(m)
          elseif gone[c] then
            where[c] = "visited"
          else
            c.why_via = m.group and ("peer group " .. m.group.id)
              or (m.master and m.master.group and ("master " .. m.master.group.id)) or nil
            while try(c) do
              c = c.parent
              if not c or not where[c] then break end
            end
          end
        end
        m = propagation_next(m, parent)
      end
    end
  end
  -- umount_list: what is on an unmounted candidate goes, but the
  -- over-mount of its root
  local i = 1
  while i <= #to_umount do
    local u = to_umount[i]
    local kids = {}
    for j, k in ipairs(u.children) do kids[j] = k end
    for _, k in ipairs(kids) do
      if k.mp == u.root then
        restore(k)
      else
        umount_one(k, "mounted on a copy that was unmounted")
      end
    end
    i = i + 1
  end
  -- restore_mounts: a mount whose parent went is reparented to where the
  -- lowest of those was
  for _, c in ipairs(to_restore) do
    local p, mp = c.parent, c.mp
    while gone[p] do
      mp, p = p.mp, p.parent
    end
    if p ~= c.parent then
      remove_value(c.parent.children, c)
      attach_child(p, c, mp)
    end
  end
  -- the mounts leave in umount_tree's list order
  local leaving = {}
  for k = 1, #list do
    leaving[k] = rules.umount_preorder and list[#list + 1 - k] or list[k]
  end
  for _, c in ipairs(to_umount) do leaving[#leaving + 1] = c end
  take_out(w, leaving, { ns = ns, call = w.current_call })
end

-- The order in which propagate_umount (6.16+) adds the candidates that
-- go (going[c]) to the unmounted set, after the mounts of original: the
-- candidates are gathered walking what receives propagation from each
-- one's parent (propagation_next) and listed last found first; trim_one
-- takes, in that order, each one with nothing mounted on it any more;
-- handle_locked then the rest, each with its going ancestors. The order
-- decides whose slaves come first where two hand theirs to one mount
-- (bulk_make_private; spec 22 "slaves handed over in the order of the
-- unmounted set").
local function umount_order(original, set, going, clist)
  local found, seen = {}, {}
  for _, x in ipairs(original) do
    local parent = x.parent
    if parent then
      local q = propagation_next(parent, parent)
      while q do
        local c = child_at(q, x.mp)
        if c and not set[c] and not seen[c] then
          seen[c] = true
          found[#found + 1] = c
        end
        q = propagation_next(q, parent)
      end
    end
  end
  -- (any the walk missed: last, in the model's order)
  for _, c in ipairs(clist) do
    if not seen[c] then seen[c] = true; found[#found + 1] = c end
  end
  local gone, out = {}, {}
  local function mounted_on(m)
    for _, k in ipairs(m.children) do
      if not set[k] and not gone[k] then return true end
    end
    return false
  end
  for i = #found, 1, -1 do
    local c = found[i]
    if going[c] and not c.locked and not mounted_on(c) then
      gone[c] = true
      out[#out + 1] = c
    end
  end
  for i = #found, 1, -1 do
    local c = found[i]
    while c and going[c] and not gone[c] and not set[c] do
      gone[c] = true
      out[#out + 1] = c
      c = c.parent
    end
  end
  return out
end

local umount_mount

local function umount_op(ns, target, names)
  local op = "umount"
  local lazy = false
  for _, n in ipairs(names) do
    if n == "detach" or n == "lazy" then lazy = true end
    if n == "expire" or n == "force" then
      error("ns:umount: flag '" .. n .. "' is not available in the model", 0)
    end
  end
  local mnt, dpath = resolve(ns, walkpath(target), op, target)
  if not mount_root(mnt, dpath) then fail("EINVAL", op, target) end
  return umount_mount(ns, mnt, lazy, target)
end

-- umount2(2) of the mount mnt (found at target), with MNT_DETACH if lazy
function umount_mount(ns, mnt, lazy, target)
  local op = "umount"
  if mnt.locked then fail("EINVAL", op, target) end
  if not mnt.parent then
    error("ns:umount: unmounting the root of a namespace is not available in the model", 0)
  end
  if not lazy and #mnt.children > 0 then fail("EBUSY", op, target) end
  local w = ns.world
  local set, list = {}, {}
  local function add(m, why)
    if not set[m] then
      set[m] = true
      m.why = why
      list[#list + 1] = m
    end
  end
  for _, m in ipairs(lazy and subtree(mnt) or { mnt }) do add(m, "unmounted by the call") end
  if w.rules.old_umount then return old_umount(w, ns, mnt, list) end
  -- propagate_umount (Linux 6.16+, Documentation/filesystems/
  -- propagate_umount.txt): the candidates are the mounts at the mount
  -- point of an unmounted mount in each mount that receives propagation
  -- from its parent; a candidate stays when something mounted inside it
  -- (not on its root) stays, at any depth; an over-mount of the root of
  -- a candidate that goes is reparented to where the stack's bottom was.
  -- (The document keeps a locked candidate whose parent stays; 6.18
  -- takes it: spec 22 "a locked copy goes too".)
  local original = {}
  for i = 1, #list do original[i] = list[i] end
  local cand, clist = {}, {}
  for _, x in ipairs(original) do
    local parent = x.parent
    if parent then
      for _, r in ipairs(receivers(parent)) do
        local c = child_at(r, x.mp)
        if c and not set[c] and not cand[c] then
          -- (a copy of the unmounted mount itself, or of one under it)
          cand[c] = x == mnt and "top" or "below"
          clist[#clist + 1] = c
        end
      end
    end
  end
  local function in_s(m) return set[m] or cand[m] end
  -- whether the tree under m holds a mount outside S
  local function leaves(m)
    if not in_s(m) then return true end
    for _, k in ipairs(m.children) do
      if leaves(k) then return true end
    end
    return false
  end
  local keep = {}
  for _, c in ipairs(clist) do
    c.why_via = c.parent and (c.parent.group and ("peer group " .. c.parent.group.id)
      or (c.parent.master and c.parent.master.group
          and ("master " .. c.parent.master.group.id))) or nil
    local stays = false
    for _, k in ipairs(c.children) do
      if k.mp ~= c.root and leaves(k) then stays = true; break end
    end
    if not stays then keep[#keep + 1] = c end
  end
  -- A locked candidate whose parent stays, a copy of a mount below the
  -- unmounted one (a lazy umount's tree), stays; a locked copy of the
  -- unmounted mount itself goes, and so does one whose parent goes: what
  -- Linux 6.18 did in every case tried (spec 22 "locked copies"; the
  -- document's rule would keep every locked one whose parent stays).
  local going = {}
  for _, m in ipairs(list) do going[m] = true end
  for _, c in ipairs(keep) do going[c] = true end
  local changed = true
  while changed do
    changed = false
    for _, c in ipairs(keep) do
      if going[c] and c.locked and c.parent and not going[c.parent]
         and cand[c] == "below" then
        going[c] = false
        changed = true
      end
    end
  end
  for _, c in ipairs(umount_order(original, set, going, clist)) do
    add(c, "a copy at the same mount point in a mount that receives propagation "
      .. "from the parent: unmounted with it")
  end
  -- the over-mounts left on the roots of what goes
  local moves = {}
  for _, m in ipairs(list) do
    for _, k in ipairs(m.children) do
      if not set[k] then
        local p = k
        local mp
        repeat
          mp, p = p.mp, p.parent
        until not set[p]
        moves[#moves + 1] = { k, p, mp }
      end
    end
  end
  take_out(w, list, { ns = ns, call = w.current_call })
  for _, mv in ipairs(moves) do
    local t, np, nmp = mv[1], mv[2], mv[3]
    if t.parent then detach_child(t) end
    attach_child(np, t, nmp)
  end
end

local function remount_op(ns, target, names, data, bind)
  local op = "remount"
  local mnt, dpath = resolve(ns, walkpath(target), op, target)
  if not mount_root(mnt, dpath) then fail("EINVAL", op, target) end
  local f = mount_flags_of(names, mnt.flags)
  if mnt.lock_flags then
    for k in pairs(mnt.lock_flags) do
      if k ~= "atime" and mnt.flags[k] and not f[k] then fail("EPERM", op, target) end
    end
    if mnt.lock_flags.atime
       and (f.atime ~= mnt.flags.atime or f.nodiratime ~= mnt.flags.nodiratime) then
      fail("EPERM", op, target)
    end
  end
  if not bind then
    -- the superblock's flags: CAP_SYS_ADMIN in the user namespace that
    -- owns it (its own, or one of its ancestors)
    local u = mnt.sb.user
    while u and u ~= ns.user do u = ns.world.user_parent[u] end
    if u ~= ns.user then fail("EPERM", op, target) end
    mnt.sb.ro = f.ro
    if data and data ~= "" then
      mnt.sb.super_options = (f.ro and "ro" or "rw") .. "," .. data
    end
  end
  mnt.flags = f
end

--- mount(2): a new filesystem (tmpfs or ramfs in the model), or, with
-- flags `bind`, `move`, `remount` or a propagation flag, that operation.
-- Raises the core's message on failure ("mount none /X: No such file or
-- directory (ENOENT)").
-- @function Space:mount
Space.mount = method("mount", function(self, source, target, fstype, flags, data)
  source = source == nil and "none" or check_path(source, "ns:mount", 1)
  target = check_path(target, "ns:mount", 2)
  fstype = opt_string(fstype, "ns:mount", 3, "fstype")
  local names = check_flags(flags, MOUNT_FLAGS, "ns:mount", 4)
  data = opt_string(data, "ns:mount", 5, "data")
  set_call(self, "mount " .. source .. " " .. target, target)
  local op, prop, rec
  for _, n in ipairs(names) do
    local d = MOUNT_FLAGS[n]
    if d.op then op = d.op end
    if d.prop then prop = d.prop end
    if d.rec then rec = true end
  end
  if op == "remount" then
    remount_op(self, target, names, data, false)
  elseif op == "bind" then
    bind_op(self, source, target, rec)
  elseif op == "move" then
    move_op(self, source, target)
  elseif prop then
    change_type(self, target, prop, rec, "mount " .. source)
  else
    new_mount_op(self, source, target, fstype, names, data)
  end
  return true
end)

--- umount2(2); flags `detach` (alias `lazy`).
-- @function Space:umount
Space.umount = method("umount", function(self, target, flags)
  target = check_path(target, "ns:umount", 1)
  local names = check_flags(flags, UMOUNT_FLAGS, "ns:umount", 2)
  set_call(self, "umount " .. target, target)
  umount_op(self, target, names)
  return true
end)

--- A bind mount (`{recursive = true}`: rbind).
-- @function Space:bind
Space.bind = method("bind", function(self, source, target, opts)
  source = check_path(source, "ns:bind", 1)
  target = check_path(target, "ns:bind", 2)
  opts = check_keys(opts, RECURSIVE, "ns:bind", 3)
  set_call(self, (opts.recursive and "rbind " or "bind ") .. source .. " " .. target, target,
    source)
  bind_op(self, source, target, opts.recursive)
  return true
end)

--- mount --move.
-- @function Space:move
Space.move = method("move", function(self, from, to)
  from = check_path(from, "ns:move", 1)
  to = check_path(to, "ns:move", 2)
  set_call(self, "move " .. from .. " " .. to, to, from)
  move_op(self, from, to)
  return true
end)

--- mount -o remount[,bind]: the mount's flags.
-- @function Space:remount
Space.remount = method("remount", function(self, target, flags, data, opts)
  target = check_path(target, "ns:remount", 1)
  local names = check_flags(flags, MOUNT_FLAGS, "ns:remount", 2)
  data = opt_string(data, "ns:remount", 3, "data")
  opts = check_keys(opts, BIND, "ns:remount", 4)
  set_call(self, "remount " .. target, target)
  remount_op(self, target, names, data, opts.bind)
  return true
end)

--- mkdir -p (opts: `parents`, `mode`).
-- @function Space:mkdir
Space.mkdir = method("mkdir", function(self, path, opts)
  path, opts = argcheck.mkdir(path, opts, 3)
  local parents = opts.parents == nil or opts.parents
  set_call(self, "mkdir " .. path, path)
  -- one walk down the path, making what is missing on the way
  resolve(self, walkpath(path), "mkdir", path, nil, parents)
  return true
end)

--- Write text to a file (created or truncated).
-- @function Space:write
Space.write = method("write", function(self, path, text)
  path = argcheck.path(path, "ns:write", 1, 3)
  argcheck.typed(text, "string", "ns:write", 2, 3)
  set_call(self, "write " .. path, path)
  local p = walkpath(path)
  if p == "/" then fail("EISDIR", "write", path) end
  local mnt, dpath = resolve(self, parent_dir(p), "write", path)
  if not mnt.sb.nodes[dpath].dir then fail("ENOTDIR", "write", path) end
  local full = join(dpath, p:match("[^/]+$"))
  local node = mnt.sb.nodes[full]
  if node then
    -- a file may be a mount point: write through to the mounted file
    local m2, d2, n2 = resolve(self, p, "write", path)
    if n2.dir then fail("EISDIR", "write", path) end
    if m2.flags.ro or m2.sb.ro then fail("EROFS", "write", path) end
    n2.text = text
    local _ = d2
  else
    if mnt.flags.ro or mnt.sb.ro then fail("EROFS", "write", path) end
    mnt.sb.nodes[full] = { text = text }
  end
  return true
end)

--- A file's content.
-- @function Space:read
Space.read = method("read", function(self, path)
  path = argcheck.path(path, "ns:read", 1, 3)
  local _, _, node = resolve(self, walkpath(path), "read", path)
  if node.dir then fail("EISDIR", "read", path) end
  return node.text
end)

--- Whether a path exists.
-- @function Space:exists
Space.exists = method("exists", function(self, path)
  path = argcheck.path(path, "ns:exists", 1, 3)
  local ok = pcall(resolve, self, walkpath(path), "exists", path)
  return ok
end)

--- The names in a directory, sorted.
-- @function Space:ls
Space.ls = method("ls", function(self, path)
  path = argcheck.path(path, "ns:ls", 1, 3)
  local mnt, dpath, node = resolve(self, walkpath(path), "readdir", path)
  if not node.dir then fail("ENOTDIR", "readdir", path) end
  local names = {}
  local prefix = dpath == "/" and "/" or dpath .. "/"
  for k in pairs(mnt.sb.nodes) do
    if k ~= dpath and k:sub(1, #prefix) == prefix and not k:find("/", #prefix + 1, true) then
      names[#names + 1] = k:sub(#prefix + 1)
    end
  end
  table.sort(names)
  return names
end)

--- Whether the mount at path is locked (a less privileged namespace locks
-- what it inherited). Raises if path is not a mount.
-- @function Space:locked
Space.locked = method("locked", function(self, path)
  path = argcheck.path(path, "ns:locked", 1, 3)
  local p = walkpath(path)
  local found
  for _, m in ipairs(self:_list()) do
    if target_of(m) == p then found = m end
  end
  if not found then error("locked " .. path .. ": not a mount point", 0) end
  -- the top one at p, as the probe's umount reaches
  local mnt = resolve(self, p, "locked", path)
  return mnt.locked
end)

-- The mounts of this namespace, in the kernel's listing order (creation).
function Space:_list()
  local out = {}
  for _, m in ipairs(self.world.mounts) do
    if m.ns == self then out[#out + 1] = m end
  end
  return out
end

-- get_dominating_id: the group of the first master up the chain with a
-- peer in ns
local function dominating(m, ns)
  local x = m.master
  while x do
    for _, y in ipairs(ring_from(x)) do
      if y.ns == ns then return y.group and y.group.id end
    end
    x = x.master
  end
  return nil
end

-- the propagation text by (shared, slave, unbindable): 4 + 2 + 1
local PROPAGATION = { [0] = "private", "unbindable", "slave", "slave,unbindable", "shared",
                      "shared,unbindable", "shared,slave", "shared,slave,unbindable" }

-- The target of m, remembered on the mount for one listing (gen: a token
-- of that listing): each mount's is its parent's plus one step.
local function target_in(m, gen)
  if m.tgen_ == gen then return m.tgt_ end
  local t
  local parent = m.parent
  if not parent then
    t = "/"
  else
    local p = target_in(parent, gen)
    local proot, mp = parent.root, m.mp
    local rel = proot == "/" and mp or relative(mp, proot)
    if rel == "/" then t = p else t = p == "/" and rel or p .. rel end
  end
  m.tgen_, m.tgt_ = gen, t
  return t
end

-- The record of m in ns; gen: the listing's token (target_in).
local function record_of(m, ns, with_from, gen)
  local mm, g, sb, parent = m.master, m.group, m.sb, m.parent
  local master = mm and mm.group and mm.group.id or nil
  local dom = with_from and mm and dominating(m, ns) or nil
  local target = target_in(m, gen)
  local f, unbindable = m.flags, m.unbindable
  return {
    id = m.uid, parent_id = parent and parent.uid or ns.root_parent,
    major = 0, minor = sb.dev, root = m.root, target = target,
    options = f.text_ or options_text(f), fstype = sb.fstype, source = sb.source,
    super_options = sb.super_options, shared = g and g.id or nil, master = master,
    propagate_from = (with_from and dom and dom ~= master) and dom or nil,
    unbindable = unbindable,
    propagation = PROPAGATION[(g and 4 or 0) + (mm and 2 or 0) + (unbindable and 1 or 0)],
  }
end

--- Whether `ns:mounts()` of a model namespace has `propagate_from`
-- without being asked (as /proc/PID/mountinfo, the kernel scenario's
-- source before Linux 6.8, does); false: only with `{propagate_from =
-- true}`, as statmount(2) records (Linux 6.8+).
M.propagate_from = false

--- The mount table of this namespace (`mountns.table`), records as the
-- kernel's.
-- @tparam[opt] table opts `propagate_from` (see `model.propagate_from`),
-- `root` (as `ns:mounts`)
function Space:mounts(opts)
  check_open(self, "mounts")
  opts = argcheck.ns_options("mounts", opts, 1, 2)
  local records = {}
  local with_from = opts.propagate_from or M.propagate_from
  local gen, n = {}, 0
  local mounts = self.world.mounts
  for i = 1, #mounts do
    local m = mounts[i]
    if m.ns == self then
      n = n + 1
      records[n] = record_of(m, self, with_from, gen)
    end
  end
  if opts.root ~= nil then
    local root = mtable.normpath(opts.root, "ns:mounts", 1, 2)
    local kept = {}
    for _, r in ipairs(records) do
      if is_subdir(r.target, root) then
        local c = {}
        for k, v in pairs(r) do c[k] = v end
        c.target = relative(r.target, root)
        kept[#kept + 1] = c
      end
    end
    records = kept
  end
  return mtable.new(records)
end

--- The topmost mount at path, or nil (`ns:mounts():find(path)`).
function Space:find(path, opts)
  check_open(self, "find")
  path = mtable.normpath(path, "ns:find", 1, 2)
  opts = argcheck.ns_options("find", opts, 2, 2)
  -- the root checked here, as the kernel's ns:find does: named as find's
  if opts.root ~= nil then mtable.normpath(opts.root, "ns:find", 2, 2) end
  return self:mounts(opts.root and { root = opts.root } or nil):find(path)
end

--- A new namespace, a copy of this one (unshare -m): `propagation`
-- ("private" default, "shared", "slave", "unchanged"), `label`, `user`
-- (a less privileged copy: shared mounts become slaves, mounts locked).
function Space:unshare(opts)
  check_open(self, "unshare")
  local prop
  opts, prop = argcheck.unshare(opts, 2)
  local w = self.world
  set_call(self, "unshare -m --propagation " .. prop .. (opts.user and " --user" or ""))
  local user = self.user
  local fl = { copy_unbindable = true }
  if opts.user then
    w.users = w.users + 1
    user = w.users
    w.user_parent[user] = self.user
    fl.shared_to_slave, fl.unprivileged = true, true
  end
  local root = copy_tree(w, self.root, self.root.root, fl)
  local ns = new_ns(w, root, opts.label, user)
  if opts.user then
    -- lock_mnt_tree: what the less privileged copy inherits is locked,
    -- its root too (Linux 6.18: ns:locked("/") is true there, and moving
    -- it is EINVAL, not ELOOP)
    for _, m in ipairs(subtree(root)) do m.locked = true end
  end
  if prop ~= "unchanged" then
    for _, m in ipairs(subtree(root)) do change_propagation(w, m, prop) end
  end
  return ns
end

--- Not available in the model: raises `ns:run: not available in the
-- model` (after the argument checks of a kernel namespace's ns:run). A
-- model namespace has no process to run fn in: fn would run in the
-- caller's, on the host's files and processes (a transcript's `touch /f`
-- made /f on the host), and give the host's answers where the kernel
-- scenario's are its own. Use the model's own file methods (`ns:write`,
-- `ns:read`, `ns:exists`, `ns:ls`): `mountns.shell` does.
function Space:run(fn)
  check_open(self, "run")
  argcheck.typed(fn, "function", "ns:run", 1, 2)
  error("ns:run: not available in the model (fn would run in this process, on the "
    .. "host's files; use ns:write, ns:read, ns:exists, ns:ls)", 2)
end

--- Get or set the label used in diagnostics and pictures.
function Space:label(name)
  if not is_ns(self) then check_open(self, "label") end
  if name ~= nil then
    self.label_ = tostring(name)
    return self
  end
  return self.label_
end

--- The namespace's ID: its serial in the world (no kernel namespace).
function Space:id()
  check_open(self, "id")
  return self.serial
end

--- The kernel version whose rules the namespace follows, "MAJOR.MINOR":
-- its world's (`world.linux`: `--linux V`, or the default); a kernel
-- namespace's `ns:linux()` is the running kernel's. Scripts that expect
-- what changed between kernels ask this, not /proc.
-- @treturn string such as "6.12"
function Space:linux()
  check_open(self, "linux")
  return self.world.linux
end

--- Tear the namespace down: its mounts leave their peer groups (no
-- propagation). Idempotent.
function Space:close()
  if is_ns(self) and self.closed then return end
  check_open(self, "close")
  set_call(self, "close")
  local list = subtree(self.root)
  for _, m in ipairs(list) do change_propagation(self.world, m, "private") end
  for _, m in ipairs(list) do m.ns = nil end
  self.closed = true
end

-- pivot_root(2) with new_root and put_old resolved: the old root goes on
-- put_old, new_root becomes the namespace's root
local function pivot(ns, new_root, put_old, p1, p2)
  local op = "pivot_root"
  local nmnt, ndpath = resolve(ns, new_root, op, p1, p2)
  local omnt, odpath, onode = resolve(ns, put_old, op, p1, p2)
  local root = ns.root
  if not onode.dir then fail("ENOTDIR", op, p1, p2) end
  if omnt.group or (nmnt.parent and nmnt.parent.group) then fail("EINVAL", op, p1, p2) end
  if nmnt.locked then fail("EINVAL", op, p1, p2) end
  if nmnt == root or omnt == root then fail("EBUSY", op, p1, p2) end
  if not mount_root(nmnt, ndpath) or not nmnt.parent then fail("EINVAL", op, p1, p2) end
  -- put_old at or under new_root
  local under = false
  local m, d = omnt, odpath
  while m do
    if m == nmnt and is_subdir(d, ndpath) then under = true; break end
    d, m = m.mp, m.parent
  end
  if not under then fail("EINVAL", op, p1, p2) end
  detach_child(nmnt)
  if root.locked then nmnt.locked, root.locked = true, false end
  attach_child(omnt, root, odpath)
  ns.root = nmnt
end

--- pivot_root into new_root (a mount point) and detach the old root, as
-- container runtimes do; with `put_old` (a path inside the new root), keep
-- it mounted there (`mountns.namespace`'s `pivot_root`).
-- @function Space:pivot_root
Space.pivot_root = method("pivot_root", function(self, new_root, opts)
  new_root = argcheck.path(new_root, "ns:pivot_root", 1, 3)
  opts = argcheck.ns_options("pivot_root", opts, 2, 3)
  local put_old, old_prop = opts.put_old, opts.old_root
  if put_old ~= nil then put_old = mtable.normpath(put_old, "ns:pivot_root", 2, 3) end
  argcheck.old_root(old_prop, 3)
  set_call(self, "pivot_root " .. new_root, new_root)
  local nr = walkpath(new_root)
  local old_root = self.root
  -- `old_root`: the old root's tree made rslave/rprivate after the pivot
  -- (ops.pivot_root), so its detach propagates nowhere
  local function demote()
    if not old_prop then return end
    for _, m in ipairs(subtree(old_root)) do
      change_propagation(self.world, m, old_prop:sub(2))
    end
  end
  if put_old then
    resolve(self, nr, "chdir", new_root)
    pivot(self, nr, walkpath(nr .. "/" .. put_old), ".", "." .. put_old)
    demote()
    return true
  end
  -- pivot_root(2)'s "." "." form (ops.pivot_root's): the old root stacked
  -- on the new one, then detached from there
  resolve(self, nr, "chdir", new_root)
  pivot(self, nr, nr, ".", ".")
  demote()
  umount_mount(self, old_root, true, ".")
  return true
end)

-- mountns.shell's method, once that module is loaded (it registers it)
local shell_method

--- Set the function behind a model namespace's `ns:shell(text, opts)`
-- (`mountns.shell` registers its method when it loads: the model, a lower
-- layer, cannot require it).
-- @tparam function fn called as fn(ns, text, opts)
function M.set_shell(fn)
  shell_method = fn
end

--- Run a shell transcript in this namespace (`mountns.shell`); raises
-- `ns:shell: not available in the model` when mountns.shell is not loaded.
-- Its file commands (mkdir, touch, ls, cat) act on the model's files.
function Space:shell(text, opts)
  check_open(self, "shell")
  if not shell_method then error("ns:shell: not available in the model", 2) end
  local out, names, steps = shell_method(self, text, opts)
  return out, names, steps
end

for _, name in ipairs { "exec", "pid", "watch", "userns", "handle",
                        "chdir", "symlink", "open_tree", "move_mount", "fsmount",
                        "mount_setattr" } do
  Space[name] = function(self)
    check_open(self, name)
    error("ns:" .. name .. ": not available in the model", 2)
  end
end

function Space:__tostring()
  return string.format("%s model:[%s]", self.label_, self.closed and "closed" or self.serial)
end

-- ---- scenario, compare -------------------------------------------------------

--- The namespaces of a world still open, in creation order.
-- @tparam table w a world
-- @treturn table
function M.open_namespaces(w)
  local out = {}
  for _, ns in ipairs(w.namespaces) do
    if not ns.closed then out[#out + 1] = ns end
  end
  return out
end

-- Set by mountns.scenario while a file runs under `mountns run`: the
-- report(name, ok, err, seconds, dot, golden) of run_file's options.
local running
--- Set (or clear, with nil) the runner's options a model scenario reports
-- to (`mountns.scenario.run_file` does this for `mountns run --model`).
-- @tparam table|nil opts run_file's options (`report`, `golden`, `dot`)
-- @tparam[opt] function picture the `dot` renderer (mountns.dot.dot)
function M.set_running(opts, picture)
  running = opts and { opts = opts, picture = picture } or nil
end

-- A scenario's time and timeout: the wall clock, the kernel scenarios'
-- (core.clock, monotonic), so a scenario that sleeps or waits counts as
-- one that computes; without core.so (the model loads without it) the
-- CPU time, which a scenario can only spend (nothing there can wait)
local clock = has_core and core.clock or os.clock

-- a kernel scenario's default (isolate.spawn's): 60 s
local DEFAULT_TIMEOUT = 60
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
  if expired then return false, timeout_message(timeout) end
  return unpack(res, 1, res.n)
end

local SCENARIO_OPTIONS = { "timeout", "label", "locked_root", "linux" }

-- a scenario's message handler
local function traceback(e)
  if type(e) == "string" then return debug.traceback(e, 2) end
  return e
end

-- the end of a scenario: fn's results (ok, ...) reported under `mountns
-- run`, returned, or its error raised (no table of the results)
local function finish_scenario(w, name, t0, ok, ...)
  local run = running
  if run then
    local open = M.open_namespaces(w)
    local title = name or "(unnamed scenario)"
    -- only for a scenario that passed (the runner shows no other's): one
    -- stopped at its timeout may have left a model call half done
    local golden = ok and run.opts.golden and format.golden_text(unpack(open)) or nil
    local dot
    if ok and run.opts.dot and run.picture then
      open[#open + 1] = { normalize = true, title = title }
      local pok, text = pcall(run.picture, unpack(open))
      dot = pok and text or false
    end
    run.opts.report(title, ok, not ok and (...) or nil, clock() - t0, dot, golden)
    if not ok then return nil end
    return ...
  end
  if not ok then error((...), 0) end
  return ...
end

--- Run a scenario on the model: the signature and option checks of
-- `mountns.scenario` (`timeout`: seconds, default 60 or `mountns run
-- --timeout`, the scenario stopped there as `bounded` says; `label`), and the
-- model's own `locked_root` (see `world:namespace`) and `linux` (the
-- kernel whose rules it follows: see `model.new`; under `mountns run
-- --model --linux V`, V).
-- @tparam[opt] string name
-- @tparam function fn called as fn(ns, ...) with the first namespace
-- @tparam[opt] table opts
-- @return fn's results
function M.scenario(name, fn, opts, ...)
  local argn = 3
  if type(name) == "function" then
    name, fn, opts, argn = nil, name, fn, 2
  elseif name ~= nil then
    argcheck.typed(name, "string", "scenario", 1, 2) -- as mountns.scenario's
  end
  argcheck.typed(fn, "function", "scenario", argn - 1, 2)
  opts = argcheck.options(opts, "scenario", argn, SCENARIO_OPTIONS, 2)
  argcheck.seconds(opts.timeout, "scenario", argn, "option 'timeout'", 2)
  if opts.locked_root ~= nil and type(opts.locked_root) ~= "boolean" then
    argcheck.error("scenario", argn, "option 'locked_root' must be a boolean, got "
      .. type(opts.locked_root), 2)
  end
  local linux = opts.linux
  if linux == nil and running then linux = running.opts.linux end
  local w = new_world(rules_for(linux, "scenario", argn, 2))
  local first = w:namespace(opts.label == nil and opts.locked_root == nil and NO_OPTIONS
    or { label = opts.label, locked_root = opts.locked_root })
  local timeout = opts.timeout or (running and running.opts.timeout) or DEFAULT_TIMEOUT
  local t0 = clock()
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
  return finish_scenario(w, name, t0, bounded(body, traceback, timeout))
end

--- Compare the open namespaces of a kernel scenario with those of a model
-- world, in the same order, by their golden texts.
-- @tparam table kernel_nss namespaces (or mount tables)
-- @tparam table model_nss namespaces (or mount tables)
-- @treturn boolean true when equal
-- @treturn[2] string the diff (`- kernel`, `+ model`)
function M.compare(kernel_nss, model_nss)
  local a = #kernel_nss > 0 and format.golden_text(unpack(kernel_nss)) or ""
  local b = #model_nss > 0 and format.golden_text(unpack(model_nss)) or ""
  if #kernel_nss ~= #model_nss then
    return false, string.format("%d namespace(s) on the kernel, %d in the model\n",
      #kernel_nss, #model_nss) .. (format.diff_text(a, b, "kernel", "model") or "")
  end
  local d = format.diff_text(a, b, "kernel", "model")
  if d then return false, d end
  return true
end

-- ---- replaying a kernel scenario's steps ---------------------------------------
-- The one replay of recorded steps (`mountns.namespace.steps()`) onto a
-- world: `model.replay` applies them all, `mountns.mirror` (`mountns run
-- --both`) one at a time, comparing the tables after each, and
-- `mountns.explain` answers from the world it leaves.

-- Steps whose code the step does not hold: never applied, always a note.
local OPAQUE = {
  run = "a function run in the namespace: its code is not in the step",
  exec = "a host tool run on the namespace: what it does is not in the step",
}
M.OPAQUE = OPAQUE

--- Where a step was called: "file.lua:19" (and " via recipes.lua:57").
-- @tparam table step
-- @treturn string
function M.where_text(step)
  return tostring(step.where or "?") .. (step.via and (" via " .. step.via) or "")
end

--- The class of replays (`model.replayer`): a world, its namespaces by
-- the kernel's serials, the notes of the steps it could not follow.
-- @type Replay
local Replay = {}
Replay.__index = Replay
M.Replay = Replay

local REPLAYER_OPTIONS = { "label", "locked_root", "override" }
local REPLAY_OPTIONS = { "locked_root", "override" }

-- the options of replayer and replay (known: the names fname reads)
local function replay_options(opts, fname, known, level)
  level = level + 1
  local argn = known == REPLAY_OPTIONS and 2 or 1
  opts = argcheck.options(opts, fname, argn, known, level)
  argcheck.option(opts, "label", "string", fname, argn, level)
  argcheck.option(opts, "locked_root", "boolean", fname, argn, level)
  argcheck.option(opts, "override", "table", fname, argn, level)
  for op, f in pairs(opts.override or {}) do
    if type(op) ~= "string" then
      argcheck.error(fname, argn, "option 'override': method names expected as keys, got "
        .. type(op), level)
    end
    if type(f) ~= "function" then
      argcheck.error(fname, argn, "option 'override': function expected for '" .. op
        .. "', got " .. type(f), level)
    end
  end
  return opts
end

local function new_replayer(opts)
  local w = M.new()
  local first = w:namespace { label = opts.label, locked_root = opts.locked_root }
  return setmetatable({ world = w, by_serial = { first }, notes = {}, noted = {},
                        count = 0, override = opts.override }, Replay)
end

--- A replay: a fresh world whose first namespace stands for the kernel
-- scenario's first one.
-- @tparam[opt] table opts `label`: the first namespace's label;
-- `locked_root`: whether the kernel scenario's `/` is locked (see
-- `world:namespace`); `override`: a table op -> function(model_ns, ...)
-- called instead of the model's method of that name (to plug a wrong rule
-- in and see a comparison catch it)
-- @treturn Replay `world`, `by_serial` (the model namespaces by the
-- kernel's serials), `notes`, `count` (steps applied)
function M.replayer(opts)
  return new_replayer(replay_options(opts, "model.replayer", REPLAYER_OPTIONS, 2))
end

-- The outcome of a pcall of a model method: ok, errno name, message.
local function outcome(ok, err)
  if ok then return true end
  local msg = type(err) == "table" and (err.message or tostring(err)) or tostring(err)
  return false, M.errno_of(msg) or msg:match(".*%((E[%u%d]+)%)"), msg
end

--- Apply one recorded step to the world. Returns "ok", or "differs" and
-- a sentence (the outcomes differ), or "opaque" / "not modelled" and why;
-- then the model's outcome (ok, errno name). The events the step made are
-- tagged with it (`event.step`).
-- @tparam table step
-- @treturn string the kind: "ok", "differs", "opaque" or "not modelled"
-- @treturn ?string why (nil when "ok")
-- @treturn ?boolean the model's outcome: true (ok) or false (nil for
-- "opaque" and "not modelled": the step did not run)
-- @treturn ?string the errno name of the model's failure
function Replay:apply(step)
  self.count = self.count + 1
  local ns = self.by_serial[step.ns]
  if OPAQUE[step.op] then return "opaque", OPAQUE[step.op] end
  if not ns then
    return "not modelled", "its namespace (serial " .. tostring(step.ns)
      .. ") is not in the model"
  end
  local w = self.world
  local first_event = #w.events + 1
  local args = step.args or { n = 0 }
  local fn = self.override and self.override[step.op] or ns[step.op]
  local res
  if type(fn) ~= "function" then
    res = { false, "ns:" .. tostring(step.op) .. ": not available in the model" }
  else
    res = { pcall(fn, ns, unpack(args, 1, args.n or #args)) }
  end
  for i = first_event, #w.events do w.events[i].step = step end
  local ok, errno, msg = outcome(res[1], res[2])
  if not ok and msg:find("not available in the model", 1, true) then
    return "not modelled", msg
  end
  if ok and step.op == "unshare" and step.new then
    self.by_serial[step.new] = res[2]
    if step.label and M.is_namespace(res[2]) then res[2]:label(step.label) end
  end
  local kernel_ok = step.ok ~= false
  if ok ~= kernel_ok then
    return "differs", kernel_ok
      and ("the kernel's call succeeded, the model's failed: " .. msg)
      or ("the kernel's call failed (" .. tostring(step.error) .. "), the model's succeeded"),
      ok, errno
  end
  -- a failure with an errno name must have the same one (a misuse raised
  -- without errno on the kernel's side must fail in the model too)
  if not ok and step.errno and errno ~= step.errno then
    return "differs", string.format("the kernel's call failed with %s, the model's with %s (%s)",
      step.errno, tostring(errno), msg), ok, errno
  end
  return "ok", nil, ok, errno
end

--- The model's namespaces still open, in the kernel's creation order.
-- @treturn table
function Replay:open()
  return M.open_namespaces(self.world)
end

--- Note a step the replay could not follow, one note per kind (op and
-- reason): the first place and a count.
-- @tparam table step
-- @tparam string why
function Replay:note(step, why)
  local key = step.op .. "\0" .. why
  local n = self.noted[key]
  if n then
    n.count = n.count + 1
  else
    n = { op = step.op, why = why, where = M.where_text(step), count = 1 }
    self.noted[key] = n
    self.notes[#self.notes + 1] = n
  end
end

--- The notes as lines: "not modelled: ns:exec (2 calls, first at
-- file.lua:12): a host tool ...", then `stopped` (a line saying where the
-- replay stopped comparing), if set.
-- @treturn {string,...}
function Replay:note_lines()
  local out = {}
  for _, n in ipairs(self.notes) do
    out[#out + 1] = string.format("not modelled: ns:%s (%s, first at %s): %s; the tables "
      .. "were compared after it", n.op, n.count == 1 and "1 call" or (n.count .. " calls"),
      n.where, n.why)
  end
  if self.stopped then out[#out + 1] = self.stopped end
  return out
end

--- Apply recorded kernel steps (`mountns.namespace.steps()`: `{ns =
-- serial, op = method, args = {n = N, ...}, ok = boolean, errno = name,
-- new = serial of a namespace unshare made, label = its label}`, and
-- `first_label`) to a fresh world, each step tagged on its events; the
-- steps the model cannot follow (`ns:run`, `ns:exec`, methods it has not)
-- are skipped and noted.
-- @tparam table steps
-- @tparam[opt] table opts `locked_root`, `override` (see `model.replayer`)
-- @treturn table the world
-- @treturn table its namespaces by the kernel's serial
-- @treturn[opt] table the first step whose outcome differs (`{index = i,
-- step = step, why = sentence, ok = the model's, errno = the model's}`), or nil
-- @treturn Replay the replay (its `notes`, `note_lines()`)
function M.replay(steps, opts)
  argcheck.typed(steps, "table", "model.replay", 1, 2)
  opts = replay_options(opts, "model.replay", REPLAY_OPTIONS, 2)
  if steps.first_label ~= nil and type(steps.first_label) ~= "string" then
    argcheck.error("model.replay", 1, "steps.first_label must be a string, got "
      .. type(steps.first_label), 2)
  end
  local r = new_replayer { label = steps.first_label, locked_root = opts.locked_root,
                           override = opts.override }
  local first
  for i, s in ipairs(steps) do
    local kind, why, ok, errno = r:apply(s)
    if kind == "differs" then
      first = first or { index = i, step = s, why = why, ok = ok, errno = errno }
    elseif kind ~= "ok" then
      r:note(s, why)
    end
  end
  return r.world, r.by_serial, first, r
end

M.World = World
return M
