-- model.ops: what mount(2) and pivot_root(2) do to a namespace's mounts
-- once its method has read the arguments (model.space): a new mount, a
-- bind, a move, a remount, a change of propagation type, a pivot; each
-- fails as the kernel does (model.errors), with the kernel's checks in
-- the kernel's order. umount is model.umount's.

local flagsets = require "mountns.flags"
local world = require "mountns.model.world"
local propagate = require "mountns.model.propagate"
local paths = require "mountns.model.paths"
local errors = require "mountns.model.errors"
local fsdata = require "mountns.model.fsdata"

local M = {}

local fail, walkpath, is_subdir = errors.fail, paths.walkpath, paths.is_subdir
local resolve, mount_root, subtree = world.resolve, world.mount_root, world.subtree
local new_sb, new_mount, default_flags = world.new_sb, world.new_mount, world.default_flags
local clone, copy_tree = world.clone, world.copy_tree
local attach_child, detach_child = world.attach_child, world.detach_child
local attach, change_propagation = propagate.attach, propagate.change_propagation
local MOUNT_FLAGS = flagsets.mount

-- mount flags -> the mount's flags table (do_mount's per-mount part)
local function mount_flags_of(names, old)
  local f = default_flags()
  local atime_given = false
  for _, n in ipairs(names) do
    local d = MOUNT_FLAGS[n]
    if d.attr then
      f[d.attr] = d.value
      if d.attr == "atime" then atime_given = true end
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

-- who mounts in ns (model.fsdata)
local who_of = fsdata.who

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

-- path_mount until 5.15 (may_mandlock, rules.mand_eperm): mount(2) with
-- MS_MANDLOCK needs CAP_SYS_ADMIN in the initial user namespace, checked
-- after the target's lookup and before any operation (remount and bind too)
local function check_mand(ns, names, target, op, p1, p2)
  if not ns.world.rules.mand_eperm or ns.user == ns.world.init_user then return end
  for _, n in ipairs(names) do
    if n == "mand" then
      resolve(ns, walkpath(target), op, p1, p2)
      fail("EPERM", op, p1, p2)
    end
  end
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
  local flags = mount_flags_of(names)
  -- the data is read before the mount is attached (ENOTDIR after EINVAL)
  local opts, super = fsdata.new_options(fstype, data, names, who_of(ns), w.rules, op, p1, p2)
  if not node.dir then fail("ENOTDIR", op, p1, p2) end
  local sb = new_sb(w, fstype, source, opts, ns.user, super)
  local m = new_mount(w, sb, "/", flags)
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
  -- a file onto a directory or back: do_move_mount's EINVAL (bind's is ENOTDIR)
  if (onode.dir and true or false) ~= (pnode.dir and true or false) then
    fail("EINVAL", op, from, to)
  end
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
    -- the data is read first (EINVAL), then the capability checked
    local sb = mnt.sb
    local o, text = fsdata.remount_options(sb, data, names, who_of(ns), ns.world.rules, op,
      target)
    if u ~= ns.user then fail("EPERM", op, target) end
    sb.opts, sb.super_options, sb.ro = o, text, o.ro
  end
  mnt.flags = f
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

M.check_mand = check_mand
M.mount_flags_of, M.change_type, M.new_mount_op, M.bind_op = mount_flags_of, change_type,
  new_mount_op, bind_op
M.move_op, M.remount_op, M.pivot = move_op, remount_op, pivot

return M
