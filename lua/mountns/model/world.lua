--- model.world: a world and its mount trees: superblocks with their files,
-- mounts (their parents, mount points, peer groups and masters), the IDs
-- a world hands out, the copies clone_mnt and copy_tree make, and path
-- lookup through the mounts of a namespace. Every other part of the model
-- works on these tables; a world's `events` is its history (explain).
-- @module mountns.model

local argcheck = require "mountns.args"
local kernel_rules = require "mountns.model.rules"
local paths = require "mountns.model.paths"
local errors = require "mountns.model.errors"
local fsdata = require "mountns.model.fsdata"

local M = {}

local find, sub = string.find, string.sub
local is_subdir, relative, join = paths.is_subdir, paths.relative, paths.join
local fail = errors.fail

local World = {}
World.__index = World

local NEW_OPTIONS = { "linux" }

-- ---- IDs -------------------------------------------------------------------------

-- The kernel's IDs of mounts and peer groups come from an IDA
-- (mnt_alloc_id, mnt_alloc_group_id: ida_alloc, ida_alloc_min(.., 1)):
-- the lowest ID not in use, so an ID freed (a mount unmounted, the last
-- peer of a group made private) is the next one handed out. An IDA here:
-- the IDs in use and the lowest that may be free (no ID below it is).
local function new_ida()
  return { used = {}, low = 1 }
end

local function ida_alloc(ida)
  local used, i = ida.used, ida.low
  while used[i] do i = i + 1 end
  used[i] = true
  ida.low = i + 1
  return i
end

local function ida_free(ida, i)
  ida.used[i] = nil
  if i < ida.low then ida.low = i end
end

local function new_world(rules)
  return setmetatable({ uid = 0, group_ids = new_ida(), mount_ids = new_ida(), devs = 0,
                        namespaces = {},
                        events = {}, seq = 0, mounts = {}, departed = {}, dead = 0,
                        users = 0,
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
  return new_world(kernel_rules.rules_for(opts.linux, "model.new", 1, 2))
end

local function next_uid(w)
  w.uid = w.uid + 1
  return w.uid
end

local function new_group(w)
  return { id = ida_alloc(w.group_ids), ring = {} }
end

-- m leaves its peer group (do_make_slave, bulk_make_private): out of the
-- ring; the group's ID is free once its last peer left
-- (mnt_release_group_id)
local function leave_group(w, m)
  local g = m.group
  if not g then return end
  m.group = nil
  local ring = g.ring
  for i = 1, #ring do
    if ring[i] == m then table.remove(ring, i); break end
  end
  if #ring == 0 then ida_free(w.group_ids, g.id) end
end

-- A mount ID in the world: the lowest free (mnt_alloc_id); free_mount
-- gives it back when the mount is gone (unmounted, its namespace closed)
local function alloc_mount_id(w)
  return ida_alloc(w.mount_ids)
end

local function free_mount_id(w, id)
  ida_free(w.mount_ids, id)
end

local function free_mount(w, m)
  if m.id then free_mount_id(w, m.id) end
  m.id = nil
end

-- m has left its namespace for good (umount_tree, a namespace closed):
-- its ID is free, it goes on the list of departed mounts (model.events:
-- when it went, from where), and the world's list of mounts, the listing
-- order, drops the departed once they are half of it, so a listing
-- costs what the live mounts cost however many came and went
local function depart(w, m)
  m.gone, m.gone_ns = next_uid(w), m.ns
  m.ns = nil
  free_mount(w, m)
  w.departed[#w.departed + 1] = m
  w.dead = w.dead + 1
  if w.dead * 2 > #w.mounts then
    local live = {}
    for _, x in ipairs(w.mounts) do
      if not x.gone then live[#live + 1] = x end
    end
    w.mounts, w.dead = live, 0
  end
end

-- a superblock: opts, its options (model.fsdata's), and their text
-- (super: fsdata.new_options's second result)
local function new_sb(w, fstype, source, opts, user, super)
  w.devs = w.devs + 1
  return { dev = w.devs, fstype = fstype, source = source, opts = opts,
           super_options = super or fsdata.text(fstype, opts),
           user = user, ro = opts.ro or false,
           inodes_used = 1, pages_used = 0, -- (its root; model.fsdata's limits)
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

-- A mount: uid (unique in its world, never reused), id (its mount ID, the
-- lowest free: reused as the kernel's), sb, root (a path in sb), parent (a
-- mount), mp (the mount point: a path in the parent's sb), ns, children
-- (attach order), flags, group ({id, ring}), master (a mount), slaves
-- (list), unbindable, locked.
-- children and slaves start as this shared empty list, replaced by a list
-- of the mount's own before the first insertion (most mounts have none)
local NONE = setmetatable({}, { __newindex = function() error("model: NONE is shared", 2) end })

local function new_mount(w, sb, root, flags)
  local uid = w.uid + 1
  w.uid = uid
  -- (the nil fields size the table for what the mount gets later: no
  -- rehash as parent, mp, ns... arrive)
  local m = { uid = uid, id = ida_alloc(w.mount_ids), sb = sb, root = root, children = NONE,
              slaves = NONE, at = nil,
              flags = flags, unbindable = false, locked = false, parent = nil, mp = nil,
              ns = nil, group = nil, master = nil, lock_flags = nil, tgen_ = nil, tgt_ = nil,
              gone = nil, gone_ns = nil, aseq = nil }
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

-- A parent's children are in two places: `children` (attach order, for
-- the walks of a tree) and `at`, an index by mount point (mp -> the
-- children there, in attach order), so path lookup (child_at) costs the
-- same under a parent of 10,000 mounts as under one of 2. Both change
-- only here.
-- attach stamps: children lists are in attach order, so sorted by stamp,
-- and unlink_child finds a child by binary search
local attach_seq = 0

local function attach_child(parent, m, mp)
  attach_seq = attach_seq + 1
  m.parent, m.mp, m.aseq = parent, mp, attach_seq
  if parent.children == NONE then parent.children, parent.at = {}, {} end
  parent.children[#parent.children + 1] = m
  local at = parent.at
  local here = at[mp]
  if here then here[#here + 1] = m else at[mp] = { m } end
end

-- take m out of its parent's lists, keeping m.parent and m.mp (old_umount's
-- mounts detached but still hashed)
local function unlink_child(m)
  local parent = m.parent
  if not parent or parent.children == NONE then return end
  local here = parent.at[m.mp]
  if not here then return end
  local i = index_of(here, m)
  if not i then return end
  table.remove(here, i)
  if #here == 0 then parent.at[m.mp] = nil end
  local children, seq = parent.children, m.aseq
  local lo, hi = 1, #children
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local c = children[mid]
    if c == m then table.remove(children, mid); return end
    if c.aseq < seq then lo = mid + 1 else hi = mid - 1 end
  end
  remove_value(children, m) -- (never reached while attach_child is the only way in)
end

local function detach_child(m)
  unlink_child(m)
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
  local at = parent.at
  local here = at and at[mp]
  return here and here[#here]
end

-- a new mount's flags (a fresh table: options_text remembers its text in it)
local function default_flags()
  return { ro = false, nosuid = false, nodev = false, noexec = false,
           atime = "relatime", nodiratime = false, nosymfollow = false, text_ = nil }
end

-- whether m is the root of its mount (a path at it names the mount itself)
local function mount_root(mnt, dpath)
  return dpath == mnt.root
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
        local sb = mnt.sb
        if mnt.flags.ro or sb.ro then fail("EROFS", op, p1, p2) end
        if not fsdata.inode_room(sb) then fail("ENOSPC", op, p1, p2) end
        sb.inodes_used = sb.inodes_used + 1
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

M.World, M.new_world, M.next_uid, M.new_group, M.new_sb = World, new_world, next_uid,
  new_group, new_sb
M.leave_group, M.alloc_mount_id, M.free_mount = leave_group, alloc_mount_id, free_mount
M.free_mount_id, M.depart = free_mount_id, depart
M.event, M.label_of, M.NONE, M.new_mount, M.default_flags = event, label_of, NONE, new_mount,
  default_flags
M.index_of, M.remove_value = index_of, remove_value
M.join_group, M.set_shared, M.set_master = join_group, set_shared, set_master
M.target_of, M.target_at, M.clone, M.subtree, M.set_ns = target_of, target_at, clone, subtree,
  set_ns
M.attach_child, M.detach_child, M.copy_tree, M.child_at = attach_child, detach_child, copy_tree,
  child_at
M.unlink_child = unlink_child
M.resolve, M.mount_root = resolve, mount_root

return M
