--- model.newapi: the file-descriptor mount API on the model: open_tree(2),
-- move_mount(2) (attach, move, MOVE_MOUNT_SET_GROUP, MOVE_MOUNT_BENEATH),
-- fsopen/fsconfig/fsmount(2) of tmpfs and ramfs and mount_setattr(2), as
-- fs/namespace.c (do_move_mount, can_move_mount_beneath, do_set_group,
-- open_detached_copy, do_mount_setattr) does them on Linux 6.18, with the
-- errno the kernel gives for each refusal (spec/model/45-model-newapi_spec.lua
-- runs each case on both).
--
-- A model mount fd (`MountFd`) stands for the kernel's: what `ns:open_tree`
-- and `ns:fsmount` return, what `ns:move_mount` and `ns:mount_setattr` take
-- in place of a path. One made by `open_tree{clone = true}` or `fsmount`
-- owns a detached tree (its mounts in no namespace: no propagation reaches
-- them, as the kernel's anonymous namespace); `move_mount` attaches it, and
-- from then on the fd names the attached mount. Closing an fd whose tree is
-- still detached dissolves the tree (its mounts leave their peer groups),
-- as the kernel does on the last fput; so does collecting it (`__gc`). An
-- open fd holds its mount: umount (not lazy) of it is EBUSY.
--
-- Not modelled (each raises "not available in the model"): a mount onto a
-- detached tree (Linux 6.15 allows it; what propagates from there is not
-- measured) and `ns:umount("/", "detach")` (model.umount says why).
-- @module mountns.model

local argcheck = require "mountns.args"
local flagsets = require "mountns.flags"
local world = require "mountns.model.world"
local propagate = require "mountns.model.propagate"
local checks = require "mountns.model.checks"
local paths = require "mountns.model.paths"
local errors = require "mountns.model.errors"
local fsdata = require "mountns.model.fsdata"
local rules = require "mountns.model.rules"

local M = {}

local fail, walkpath, is_subdir = errors.fail, paths.walkpath, paths.is_subdir
local resolve, subtree, child_at = world.resolve, world.subtree, world.child_at
local clone, copy_tree, new_sb, new_mount = world.clone, world.copy_tree, world.new_sb,
  world.new_mount
local default_flags, event, set_master, join_group = world.default_flags, world.event,
  world.set_master, world.join_group
local attach_child, detach_child = world.attach_child, world.detach_child
local attach, change_propagation = propagate.attach, propagate.change_propagation
local check_keys, check_path = checks.check_keys, checks.check_path

-- ---- the mount fd --------------------------------------------------------------

--- A model mount fd: `ns:open_tree` and `ns:fsmount` return one; `close`,
-- `fileno`, `tostring` ("mountfd 3 [open_tree clone /A]"), `==` (the same
-- mount), `<close>` and `__gc`, as the core's mount fd.
-- @type MountFd
local MountFd = {}
MountFd.__index = MountFd
M.MountFd = MountFd

local function is_fd(v)
  return getmetatable(v) == MountFd
end
M.is_fd = is_fd

-- the tree of an anonymous namespace (anon: its mounts' `anon`) leaves
-- every peer group and master, as umount_tree does on the last fput
local function dissolve(w, anon)
  if anon.done then return end
  anon.done = true
  for _, m in ipairs(subtree(anon.root)) do
    if m.anon == anon then
      change_propagation(w, m, "private")
      m.anon, m.dissolved = nil, true
    end
  end
end

local function release(fd)
  if fd.closed then return end
  fd.closed = true
  local m = fd.mount
  m.fd_refs = (m.fd_refs or 1) - 1
  local anon = fd.anon
  if anon and anon.root.anon == anon then dissolve(fd.world, anon) end
  fd.anon = nil
end

--- Close the fd (twice is harmless); a tree still detached is dissolved.
function MountFd:close()
  if not is_fd(self) then
    argcheck.error("mountfd:close", 0, "calling on bad self", 2)
  end
  release(self)
end
MountFd.__close = MountFd.close
MountFd.__gc = function(self) release(self) end

--- The fd's number: a serial of its world (the model opens no fd).
-- @treturn int
function MountFd:fileno()
  if self.closed then error("attempt to use a closed mount fd", 2) end
  return self.number
end

function MountFd:__tostring()
  if self.closed then return "mountfd (closed) [" .. self.what .. "]" end
  return "mountfd " .. self.number .. " [" .. self.what .. "]"
end

function MountFd.__eq(a, b)
  return rawequal(a, b) or (not a.closed and not b.closed and a.mount == b.mount)
end

-- A new fd on mount (at dpath of it) named `what`; owning: it holds the
-- detached tree whose root mount is (its mounts get `anon`).
local function new_fd(w, mount, dpath, what, owning)
  w.fd_serial = (w.fd_serial or 2) + 1
  local fd = setmetatable({ world = w, mount = mount, dpath = dpath, what = what,
                            closed = false, number = w.fd_serial }, MountFd)
  mount.fd_refs = (mount.fd_refs or 0) + 1
  if owning then
    local anon = { root = mount }
    for _, m in ipairs(subtree(mount)) do m.anon, m.ns = anon, nil end
    fd.anon = anon
  end
  if newproxy then -- Lua 5.1, LuaJIT: no __gc on a table; a proxy carries it
    local proxy = newproxy(true) -- luacheck: ignore
    getmetatable(proxy).__gc = function() release(fd) end
    fd.proxy_ = proxy
  end
  return fd
end

-- ---- arguments, in the core's words (csrc/newapi.c) ----------------------------

-- A place: a model mount fd (open) or a path. Returns fd or nil, the path
-- (nil for an fd) and the name messages show ("[open_tree clone /A]").
local function where(v, fname, argn)
  if is_fd(v) then
    if v.closed then argcheck.error(fname, argn, "attempt to use a closed mount fd", 4) end
    return v, nil, "[" .. v.what .. "]"
  end
  if type(v) ~= "string" then
    argcheck.error(fname, argn, "path or mount fd expected, got "
      .. (v == nil and "no value" or type(v)), 4)
  end
  v = check_path(v, fname, argn)
  return nil, v, v
end

local OPEN_TREE = { clone = "boolean", recursive = "boolean", nofollow = "boolean",
                    no_automount = "boolean", empty_path = "boolean" }
local MOVE_MOUNT = { set_group = "boolean", beneath = "boolean", nofollow = "boolean" }
local SETATTR = { recursive = "boolean", propagation = "string", ro = true, nosuid = true,
                  nodev = true, noexec = true, noatime = true, relatime = true,
                  strictatime = true, nodiratime = true, nosymfollow = true, idmap = true,
                  nofollow = "boolean" }
local ON_OFF = { "ro", "nosuid", "nodev", "noexec", "nodiratime", "nosymfollow" }
local ATIME = { "relatime", "noatime", "strictatime" }
local PROPAGATION = { shared = true, private = true, slave = true, unbindable = true }
-- fsmount's attributes as a flag list: the names of csrc/newapi.c's attr_flags
local FSMOUNT_ATTRS = {}
for _, n in ipairs { "ro", "rw", "nosuid", "nodev", "noexec", "nodiratime", "nosymfollow",
                     "relatime", "noatime", "strictatime" } do
  FSMOUNT_ATTRS[n] = flagsets.mount[n]
end

-- mount_setattr's attribute table (lmns_check_attrs): set, clear (name ->
-- true), the atime mode or nil, the propagation or nil, the idmap or nil.
local function read_attrs(t, fname, argn, allow_prop)
  local set, clear, atime = {}, {}, nil
  for _, n in ipairs(ON_OFF) do
    local v = t[n]
    if v ~= nil and type(v) ~= "boolean" then
      argcheck.error(fname, argn, "attribute '" .. n .. "' must be a boolean, got " .. type(v), 4)
    end
    if v == true then set[n] = true elseif v == false then clear[n] = true end
  end
  for _, n in ipairs(ATIME) do
    local v = t[n]
    if v ~= nil then
      if type(v) ~= "boolean" then
        argcheck.error(fname, argn, "attribute '" .. n .. "' must be a boolean, got "
          .. type(v), 4)
      end
      if v == false and n == "relatime" then
        argcheck.error(fname, argn, "relatime = false names no atime mode: set noatime or "
          .. "strictatime", 4)
      end
      if atime then
        argcheck.error(fname, argn, "more than one atime mode (noatime, relatime, "
          .. "strictatime)", 4)
      end
      atime = v and n or "relatime"
    end
  end
  if not allow_prop then return set, clear, atime end
  local prop = t.propagation
  if prop ~= nil and not PROPAGATION[prop] then
    argcheck.error(fname, argn, "option 'propagation': invalid value '" .. tostring(prop) .. "'", 4)
  end
  local idmap = t.idmap
  if idmap ~= nil then
    local s = type(idmap) == "userdata" and tostring(idmap) or ""
    if not s:find("^user:%[") then
      local kind = s:match("^(%a+):%[")
      argcheck.error(fname, argn, "option 'idmap': user namespace handle expected, got "
        .. (kind and ("a " .. kind .. " namespace") or type(idmap)), 4)
    end
  end
  return set, clear, atime, prop, idmap
end

-- a namespace the scenario made in a user namespace of its own: the
-- kernel's methods refuse there (a mount fd cannot cross to its agent)
local function check_same_user(ns, name)
  local first = ns.world.namespaces[1]
  if first and ns.user ~= first.user then
    error(name .. ": not available in a namespace of another user namespace (its mount fds "
      .. "cannot cross processes); use ns:run", 0)
  end
end

-- (the marks a call's lookups clear: `touch` below, once they succeeded)
local function call_event(ns, text, target, source)
  ns.world.current_call = text
  event(ns.world, { ns = ns.label_, call = text, kind = "call", target = target,
                    source = source })
end

-- The mount and the path in its superblock a place names: an fd's mount
-- (at its path), or what path lookup reaches in ns.
local function place(ns, fd, path, op, p1, p2)
  if fd then return fd.mount, fd.dpath end
  local p = walkpath(path)
  local ok, mnt, dpath, node = pcall(resolve, ns, p, op, p1, p2)
  if not ok then
    -- a lookup that failed puts the mount where it stopped with mntput,
    -- which clears its MNT_EXPIRE mark (as M.touch; measured: `check`)
    local up_ok, up = pcall(resolve, ns, paths.parent_dir(p), op, p1, p2)
    if up_ok then up.expiry_mark = nil end
    error(mnt, 0)
  end
  return mnt, dpath, node
end

local function node_of(m, dpath)
  return m.sb.nodes[dpath] or { dir = true }
end

-- is m usable by a call in ns: in ns, or in a detached tree (anon)
local function ours(ns, m)
  return m.ns == ns or (m.ns == nil and m.anon ~= nil)
end

-- ---- open_tree -----------------------------------------------------------------

-- __do_loopback: a detached copy of the mount at dpath of mnt
local function open_tree(ns, from, opts)
  local fd, path, name = where(from, "ns:open_tree", 1)
  opts = check_keys(opts, OPEN_TREE, "ns:open_tree", 2)
  if opts.recursive and not opts.clone then
    argcheck.error("ns:open_tree", 2, "recursive needs clone = true", 3)
  end
  check_same_user(ns, "open_tree")
  local op = "open_tree"
  local w = ns.world
  call_event(ns, (opts.clone and "open_tree clone " or "open_tree ") .. name, path)
  local mnt, dpath = place(ns, fd, path, op, name)
  mnt.expiry_mark = nil
  if fd and (mnt.dissolved or not ours(ns, mnt)) then fail("EINVAL", op, name) end
  if not opts.clone then
    return new_fd(w, mnt, dpath, "open_tree " .. name, false)
  end
  if mnt.unbindable then fail("EINVAL", op, name) end
  if not opts.recursive then
    for _, c in ipairs(mnt.children) do
      if c.locked and is_subdir(c.mp, dpath) then fail("EINVAL", op, name) end
    end
  end
  local copy
  if opts.recursive then
    copy = copy_tree(w, mnt, dpath, {})
  else
    copy = clone(w, mnt, dpath, {})
  end
  copy.locked = false -- (the mounts under it keep their locks)
  return new_fd(w, copy, copy.root, "open_tree clone " .. name, true)
end

-- ---- move_mount ----------------------------------------------------------------

-- propagation_would_overmount (fs/pnode.c): parent shared, m attached,
-- m's root the very directory it would be mounted on, and parent
-- propagating to m: a peer of m or of one of m's masters (not an
-- ancestor of m: a private bind under a shared parent is no overmount)
local function would_overmount(parent, m, mp)
  if not parent.group or m.ns == nil then return false end
  if m.sb ~= parent.sb or m.root ~= mp then return false end
  local x = m
  while x do
    if x.group == parent.group then return true end
    x = x.master
  end
  return false
end

local function tree_has_unbindable(m)
  for _, x in ipairs(subtree(m)) do if x.unbindable then return true end end
  return false
end

-- do_set_group: `to` joins the peer group (and the master) of `from`
local function set_group(ns, from_m, from_d, to_m, to_d, op, p1, p2)
  for _, m in ipairs { from_m, to_m } do
    if not ours(ns, m) or m.dissolved then fail("EINVAL", op, p1, p2) end
  end
  if from_d ~= from_m.root or to_d ~= to_m.root then fail("EINVAL", op, p1, p2) end
  if from_m.sb ~= to_m.sb then fail("EINVAL", op, p1, p2) end
  if not is_subdir(to_m.root, from_m.root) then fail("EINVAL", op, p1, p2) end
  for _, c in ipairs(from_m.children) do
    if c.locked and is_subdir(c.mp, to_m.root) then fail("EINVAL", op, p1, p2) end
  end
  if to_m.group or to_m.master then fail("EINVAL", op, p1, p2) end
  -- (an unbindable `to` joined the group until 7.1: rules.set_group_unbindable)
  if to_m.unbindable and ns.world.rules.set_group_unbindable then
    fail("EINVAL", op, p1, p2)
  end
  if not from_m.group and not from_m.master then fail("EINVAL", op, p1, p2) end
  if from_m.master then set_master(to_m, from_m.master, from_m) end
  if from_m.group then
    join_group(to_m, from_m)
    to_m.unbindable = false
  end
  return true -- as the kernel's move_mount (run --both compares what it returns)
end

local function move_mount(ns, from, to, opts)
  local ffd, fpath, fname = where(from, "ns:move_mount", 1)
  local tfd, tpath, tname = where(to, "ns:move_mount", 2)
  opts = check_keys(opts, MOVE_MOUNT, "ns:move_mount", 3)
  if opts.set_group and opts.beneath then
    argcheck.error("ns:move_mount", 3, "set_group and beneath exclude each other", 3)
  end
  check_same_user(ns, "move_mount")
  local op = opts.set_group and "move_mount set_group"
    or (opts.beneath and "move_mount beneath" or "move_mount")
  local w = ns.world
  call_event(ns, op .. " " .. fname .. " " .. tname, tpath, fpath)
  -- MOVE_MOUNT_BENEATH came with Linux 6.5: an unknown flag before (the
  -- flags are checked before any lookup), ENOSYS in mountns's words
  if opts.beneath and not w.rules.beneath then
    errors.fail_since(rules.SINCE.beneath, op, fname, tname)
  end
  local old, odpath, onode = place(ns, ffd, fpath, op, fname, tname)
  -- until 6.15 the syscall looks up `from` first and puts it whatever
  -- follows (rules.move_from_first): a failed lookup of `to` clears its mark
  if w.rules.move_from_first then old.expiry_mark = nil end
  local p, pdpath, pnode = place(ns, tfd, tpath, op, fname, tname)
  -- both found: their puts clear the marks (a failed lookup of `to` left
  -- the mark of `from` on 6.18: measured by `check`)
  old.expiry_mark, p.expiry_mark = nil, nil
  if opts.set_group then return set_group(ns, old, odpath, p, pdpath, op, fname, tname) end
  if tfd then
    if p.ns == nil and p.anon and not p.dissolved then
      -- Linux 6.15 mounts a detached tree onto another; an attached one: EINVAL
      if old.ns ~= nil then fail("EINVAL", op, fname, tname) end
      error("ns:move_mount: a mount onto a detached tree is not available in the model", 0)
    end
    -- the fd names the mount's root: path lookup goes on to what is on it
    local top = child_at(p, pdpath)
    while top do p, pdpath = top, top.root; top = child_at(p, pdpath) end
  end
  onode, pnode = onode or node_of(old, odpath), pnode or node_of(p, pdpath)
  -- may_use_mount: the place is in the caller's namespace
  if p.ns ~= ns then fail("EINVAL", op, fname, tname) end
  -- attached: in a namespace (its root too: the kernel's has a parent,
  -- the root it was pivoted from, so moving it is ELOOP below)
  local attached = old.ns ~= nil
  if attached and old.ns ~= ns then fail("EINVAL", op, fname, tname) end
  -- detached: only the root of a tree an fd holds (not one dissolved, or
  -- unmounted by a lazy umount)
  if not attached and not (old.anon and old.anon.root == old) then
    fail("EINVAL", op, fname, tname)
  end
  if old.locked then fail("EINVAL", op, fname, tname) end
  if odpath ~= old.root then fail("EINVAL", op, fname, tname) end
  if (onode.dir and true or false) ~= (pnode.dir and true or false) then
    fail("EINVAL", op, fname, tname)
  end
  if attached and old.parent and old.parent.group then fail("EINVAL", op, fname, tname) end
  local top
  if opts.beneath then
    -- can_move_mount_beneath: under the top mount at `to`
    top = p
    -- (a locked top: EINVAL until 7.0; 7.1 slides the mount under it and
    -- hands it the lock, but a locked mount is in another user namespace
    -- than the caller, where the model has no move_mount: check_same_user)
    if pdpath ~= top.root or top.locked then fail("EINVAL", op, fname, tname) end
    if not top.parent then
      -- the namespace's root: until 7.0 refused; from 7.1 the kernel
      -- slides the mount under it, where no process of the namespace
      -- sees it (rules.beneath_root)
      if not w.rules.beneath_root then fail("EINVAL", op, fname, tname) end
      error("ns:move_mount: beneath the namespace's root is not available in the model "
        .. "(Linux " .. w.rules.linux .. " puts the mount under the root, below what the "
        .. "model's namespace has)", 0)
    end
    if child_at(old, old.root) then fail("EINVAL", op, fname, tname) end
    local x = old
    while x do
      if x == top then fail("EINVAL", op, fname, tname) end
      x = x.parent
    end
    if would_overmount(top.parent, old, top.mp) or would_overmount(top.parent, top, top.mp) then
      fail("EINVAL", op, fname, tname)
    end
    p, pdpath = top.parent, top.mp
  end
  if p.group and tree_has_unbindable(old) then fail("EINVAL", op, fname, tname) end
  local x = p
  while x do
    if x == old then fail("ELOOP", op, fname, tname) end
    x = x.parent
  end
  local anon = not attached and old.anon
  if anon then
    for _, m in ipairs(subtree(old)) do if m.anon == anon then m.anon = nil end end
    anon.done = true -- attached: its fd no longer dissolves it
  end
  attach(w, old, p, pdpath, { ns = ns, call = w.current_call, moving = attached })
  if top then
    -- the top mount goes on the root of the one slid under it
    detach_child(top)
    attach_child(old, top, old.root)
  end
  return true
end

-- ---- mount_setattr -------------------------------------------------------------

-- PROC_USER_INIT_INO: the initial user namespace (an idmap of it: EPERM)
local INIT_USERNS = 0xEFFFFFFD

local function mount_setattr(ns, target, attrs)
  local fd, path, name = where(target, "ns:mount_setattr", 1)
  if type(attrs) ~= "table" then
    argcheck.error("ns:mount_setattr", 2, "table expected, got "
      .. type(attrs), 3) -- "got nil" as the core's (its luaL_checktype follows a settop)
  end
  check_keys(attrs, SETATTR, "ns:mount_setattr", 2)
  local set, clear, atime, prop, idmap = read_attrs(attrs, "ns:mount_setattr", 2, true)
  check_same_user(ns, "mount_setattr")
  local op = attrs.recursive and "mount_setattr recursive" or "mount_setattr"
  call_event(ns, op .. " " .. name, path)
  -- no mount_setattr before Linux 5.12: ENOSYS, after the arguments' checks
  if not ns.world.rules.mount_setattr then
    errors.fail_since(rules.SINCE.mount_setattr, op, name)
  end
  -- build_mount_idmapped: an idmap of the initial user namespace
  if idmap and idmap.id and idmap:id() == INIT_USERNS then fail("EPERM", op, name) end
  local mnt, dpath = place(ns, fd, path, op, name)
  mnt.expiry_mark = nil
  if dpath ~= mnt.root then fail("EINVAL", op, name) end
  if mnt.dissolved or not ours(ns, mnt) then fail("EINVAL", op, name) end
  local list = attrs.recursive and subtree(mnt) or { mnt }
  -- mount_setattr_prepare: every mount checked before any changes
  for _, m in ipairs(list) do
    local lf = m.lock_flags
    if lf then
      for k in pairs(clear) do
        if lf[k] and m.flags[k] then fail("EPERM", op, name) end
      end
      if lf.atime and ((atime and atime ~= m.flags.atime)
                       or (set.nodiratime and not m.flags.nodiratime)
                       or (clear.nodiratime and m.flags.nodiratime)) then
        fail("EPERM", op, name)
      end
    end
    if idmap then
      if m.sb.fstype ~= "tmpfs" then fail("EINVAL", op, name) end
      if m.flags.idmapped then fail("EPERM", op, name) end
      if m.ns ~= nil then fail("EINVAL", op, name) end
    end
  end
  local w = ns.world
  for _, m in ipairs(list) do
    local f = {}
    for k, v in pairs(m.flags) do f[k] = v end
    for k in pairs(set) do f[k] = true end
    for k in pairs(clear) do f[k] = false end
    if atime then f.atime = atime end
    if idmap then f.idmapped = true end
    f.text_ = nil
    m.flags = f
  end
  if prop then
    for _, m in ipairs(list) do change_propagation(w, m, prop) end
  end
  return true
end

-- ---- fsmount -------------------------------------------------------------------

-- The filesystems fsopen knows (tmpfs and ramfs are modelled: their
-- config is read by model.fsdata, as mount(2)'s data).
local MODELLED = { tmpfs = true, ramfs = true }
local REAL_FS = { proc = true, sysfs = true, devpts = true, mqueue = true, ext4 = true,
                  xfs = true, btrfs = true, overlay = true, cgroup2 = true, fuse = true }

-- the config table's entries in the core's order: the array part (a flag
-- name or a {key, value} pair), then the other keys (sorted here: the
-- kernel reads them in table order, which a model cannot know)
local function config_entries(config)
  local out = {}
  if config == nil then return out end
  if type(config) ~= "table" then
    argcheck.error("ns:fsmount", 2, "table expected, got " .. type(config), 4)
  end
  local n = #config
  for i = 1, n do
    local e = config[i]
    if type(e) == "string" then
      out[#out + 1] = { e, true }
    elseif type(e) == "table" then
      out[#out + 1] = { e[1], e[2] }
    else
      argcheck.error("ns:fsmount", 2, string.format("config #%d must be a flag name or a "
        .. "{key, value} pair, got %s", i, type(e)), 4)
    end
  end
  local keys = {}
  for k in pairs(config) do
    if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do out[#out + 1] = { k, config[k] } end
  for _, e in ipairs(out) do
    local k, v = e[1], e[2]
    if type(k) ~= "string" then
      argcheck.error("ns:fsmount", 2, "config keys must be strings, got " .. type(k), 4)
    end
    if type(v) ~= "boolean" and type(v) ~= "string" and type(v) ~= "number" then
      argcheck.error("ns:fsmount", 2, string.format("config '%s' must be a string, number "
        .. "or true, got %s", k, type(v)), 4)
    end
    if k:find("\0", 1, true) or (type(v) == "string" and v:find("\0", 1, true)) then
      argcheck.error("ns:fsmount", 2, "config '" .. k .. "' contains a NUL byte", 4)
    end
    if type(v) == "number" then e[2] = tostring(v) end
  end
  return out
end

local function fsmount(ns, fstype, config, attrs)
  if type(fstype) ~= "string" then
    argcheck.error("ns:fsmount", 1, "string expected, got "
      .. (fstype == nil and "no value" or type(fstype)), 3)
  end
  if fstype:find("\0", 1, true) then
    argcheck.error("ns:fsmount", 1, "fstype contains a NUL byte", 3)
  end
  local names
  if type(attrs) == "table" and #attrs == 0 then
    check_keys(attrs, { ro = true, nosuid = true, nodev = true, noexec = true, noatime = true,
                        relatime = true, strictatime = true, nodiratime = true,
                        nosymfollow = true }, "ns:fsmount", 3)
    local set, _, atime = read_attrs(attrs, "ns:fsmount", 3, false)
    names = {}
    for k in pairs(set) do names[#names + 1] = k end
    if atime then names[#names + 1] = atime end
  else
    names = argcheck.flags(attrs, FSMOUNT_ATTRS, "ns:fsmount", 3, 2)
  end
  local entries = config_entries(config)
  check_same_user(ns, "fsmount")
  local w = ns.world
  call_event(ns, "fsmount " .. fstype)
  if not MODELLED[fstype] then
    if REAL_FS[fstype] then
      error("ns:fsmount: filesystem type '" .. fstype .. "' is not available in the model", 0)
    end
    fail("ENODEV", "fsopen", fstype)
  end
  -- the config as mount(2)'s data: one reader of tmpfs's and ramfs's
  -- options (model.fsdata), the sb flags included; `source` names the
  -- superblock, not an option
  local source, data = "none", {}
  for _, e in ipairs(entries) do
    local k, v = e[1], e[2]
    if k == "source" and v ~= true and v ~= false then source = tostring(v)
    elseif v == true then data[#data + 1] = k
    elseif v ~= false then data[#data + 1] = k .. "=" .. tostring(v) end
  end
  local opts, super = fsdata.new_options(fstype, table.concat(data, ","), {}, fsdata.who(ns),
    w.rules, "fsconfig", fstype)
  local f = default_flags()
  for _, n in ipairs(names) do
    local d = flagsets.mount[n]
    if d and d.attr then f[d.attr] = d.value end
  end
  local sb = new_sb(w, fstype, source, opts, ns.user, super)
  local m = new_mount(w, sb, "/", f)
  return new_fd(w, m, "/", "fsmount " .. fstype, true)
end

M.open_tree, M.move_mount, M.mount_setattr, M.fsmount = open_tree, move_mount, mount_setattr,
  fsmount

--- A call of ns on these paths uses the mounts they end in: mntput clears
-- their MNT_EXPIRE marks (model.umount's expire); umount2 puts the mount
-- it found with mntput_no_expire, which keeps it, but a lookup of its
-- that failed puts where it stopped with mntput (measured: `check`).
-- @param ns a model namespace
-- @tparam string text the call ("mkdir /A/x")
-- @tparam[opt] string target
-- @tparam[opt] string source
function M.touch(ns, text, target, source)
  if not ns.world.expiry_marks_ then return end
  local umount = text:find("^umount ") ~= nil
  for _, p in ipairs { target or "/", source or "/" } do
    if type(p) == "string" and p:sub(1, 1) == "/" then
      p = walkpath(p)
      local found, mnt = pcall(resolve, ns, p, "touch", p)
      if found and not umount then mnt.expiry_mark = nil end
      if not found or not umount then
        local ok, up = pcall(resolve, ns, paths.parent_dir(p), "touch", p)
        if ok then up.expiry_mark = nil end
      end
    end
  end
end

-- ---- mirroring the kernel's fds (model.replay) -----------------------------------

-- A replay meets the kernel's mount fds in the steps it applies: the
-- result of an open_tree or fsmount step (`step.result`), an argument of
-- the next ones. It keeps kernel fd -> model fd (weak: a collected kernel
-- fd drops its link) and, live (`run --both`), closes the model fd of a
-- kernel fd closed since the last step, so a detached tree dissolves on
-- both sides before anything else happens.

--- The step's arguments with each kernel mount fd replaced by its model
-- fd; nil and why when one was not made by a step the replay applied.
-- @tparam table replay
-- @tparam table args a step's (packed)
function M.translate(replay, args)
  local links = replay.fd_links
  local out
  for i = 1, args.n or #args do
    local v = args[i]
    if type(v) == "userdata" and tostring(v):find("^mountfd ") then
      local m = links and links.model[v]
      if not m then
        return nil, "a mount fd the model was not shown (made outside the namespace's methods)"
      end
      out = out or { n = args.n }
      out[i] = m
    end
  end
  if not out then return args end
  for i = 1, args.n or #args do if out[i] == nil then out[i] = args[i] end end
  return out
end

--- Link a kernel fd (a step's result) to the model fd the replay made.
function M.link(replay, kernel_fd, model_fd)
  local links = replay.fd_links
  if not links then
    links = { model = setmetatable({}, { __mode = "k" }), list = {} }
    replay.fd_links = links
  end
  links.model[kernel_fd] = model_fd
  -- (weak values: a collected kernel fd lets its model fd go, whose
  -- __gc dissolves its tree)
  links.list[#links.list + 1] = setmetatable({ k = kernel_fd, m = model_fd }, { __mode = "v" })
end

--- Close the model fds whose kernel fd was closed or collected (live
-- replays only: after the fact every kernel fd is closed).
function M.sync(replay)
  local links = replay.fd_links
  if not links then return end
  local keep = {}
  for _, l in ipairs(links.list) do
    local k = l.k
    if k == nil or tostring(k):find("(closed)", 1, true) then
      if l.m then l.m:close() end
    else
      keep[#keep + 1] = l
    end
  end
  links.list = keep
end

return M
