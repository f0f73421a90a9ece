--- model.space: the class of model namespaces (`model.Namespace`): the
-- methods of a scenario namespace (`mountns.namespace`), each reading its
-- arguments as the kernel namespace's does (model.checks), recording the
-- call in its world's history and running the operation (model.ops,
-- model.umount) with the core's error messages; the mount table
-- (model.listing), unshare, close; and a world's first namespace
-- (`world:namespace`), the class's constructor.
-- @module mountns.model

local argcheck = require "mountns.args"
local flagsets = require "mountns.flags"
local mtable = require "mountns.table"
local world = require "mountns.model.world"
local propagate = require "mountns.model.propagate"
local umount = require "mountns.model.umount"
local checks = require "mountns.model.checks"
local listing = require "mountns.model.listing"
local ops = require "mountns.model.ops"
local paths = require "mountns.model.paths"
local errors = require "mountns.model.errors"
local fsdata = require "mountns.model.fsdata"
local events = require "mountns.model.events"
local newapi = require "mountns.model.newapi"

local M = {}

local World, Failure, fail = world.World, errors.Failure, errors.fail
local walkpath, join, parent_dir = paths.walkpath, paths.join, paths.parent_dir
local is_subdir, relative = paths.is_subdir, paths.relative
local new_sb, new_mount, event = world.new_sb, world.new_mount, world.event
local default_flags, subtree, resolve = world.default_flags, world.subtree, world.resolve
local copy_tree, change_propagation = world.copy_tree, propagate.change_propagation
local check_flags, check_keys, opt_string, check_path = checks.check_flags, checks.check_keys,
  checks.opt_string, checks.check_path
local MOUNT_FLAGS = flagsets.mount
local RECURSIVE, BIND = checks.RECURSIVE, checks.BIND
local record_of = listing.record_of
local change_type, remount_op, pivot = ops.change_type, ops.remount_op, ops.pivot
local new_mount_op, bind_op, move_op = ops.new_mount_op, ops.bind_op, ops.move_op
local umount_op, umount_mount = umount.umount_op, umount.umount_mount

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

-- root_parent: the mount ID of the root's parent (a scenario's / sits on
-- the root it was pivoted from, which the namespace holds but does not
-- list), taken before the root's, as the kernel's is
local function new_ns(w, root, label, user, root_parent)
  local ns = setmetatable({ world = w, root = root, serial = #w.namespaces + 1,
                            user = user, closed = false,
                            root_parent = root_parent }, Space)
  ns.label_ = label or ("ns" .. ns.serial)
  w.namespaces[#w.namespaces + 1] = ns
  for _, m in ipairs(subtree(root)) do m.ns = ns end
  return ns
end

local NAMESPACE_OPTIONS = { "label", "locked_root" }

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
  -- (the user namespace whose IDs are all mapped: the first's, unless
  -- the scenario is an unprivileged caller's; who owns the others: root,
  -- or that caller, whose 0 they all map)
  if self.init_user == nil then
    self.init_user = not opts.locked_root and self.users
    self.userns_who = opts.locked_root and fsdata.caller() or
      { init = false, uid = 0, gid = 0 }
  end
  local who = self.init_user == self.users and fsdata.ROOT or self.userns_who
  local sb = new_sb(self, "tmpfs", "mountns", fsdata.new_options("tmpfs", "mode=755", {},
    who, self.rules), self.users)
  local root_parent = world.alloc_mount_id(self)
  local root = new_mount(self, sb, "/", default_flags())
  root.locked = opts.locked_root or false
  return new_ns(self, root, opts.label, self.users, root_parent)
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

local function set_call(ns, text, target, source)
  newapi.touch(ns, text, target, source)
  ns.world.current_call = text
  -- target, source: the paths of the call, for explain (the text cannot
  -- be split where a path holds a space)
  event(ns.world, { ns = ns.label_, call = text, kind = "call", target = target,
                    source = source })
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

--- mount(2): a new filesystem (tmpfs or ramfs in the model), or, with
-- flags `bind`, `move`, `remount` or a propagation flag, that operation.
-- Raises the core's message on failure ("mount none /X: No such file or
-- directory (ENOENT)").
-- @function Space:mount
Space.mount = method("mount", function(self, source, target, fstype, flags, data)
  source = source == nil and "none" or check_path(source, "ns:mount", 1)
  target = check_path(target, "ns:mount", 2)
  fstype = opt_string(fstype, "ns:mount", 3, "fstype")
  local names = check_flags(flags, "mount", "ns:mount", 4)
  data = opt_string(data, "ns:mount", 5, "data")
  set_call(self, "mount " .. source .. " " .. target, target)
  ops.check_mand(self, names, target, "mount", source, target)
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
  local names = check_flags(flags, "umount", "ns:umount", 2)
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
  local names = check_flags(flags, "mount", "ns:remount", 2)
  data = opt_string(data, "ns:remount", 3, "data")
  opts = check_keys(opts, BIND, "ns:remount", 4)
  set_call(self, "remount " .. target, target)
  ops.check_mand(self, names, target, "remount", target)
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

-- A file's new text (open with O_TRUNC, then write): its pages are free
-- first; what does not fit in the superblock's free pages (tmpfs's size)
-- is cut at a page and the write fails with ENOSPC, the file created and
-- holding what fitted, as the kernel leaves it.
local function fill(sb, node, text, path)
  sb.pages_used = sb.pages_used - fsdata.pages(#node.text)
  node.text = ""
  local free, need = fsdata.pages_free(sb), fsdata.pages(#text)
  if need > free then
    node.text = text:sub(1, free * 4096)
    sb.pages_used = sb.pages_used + free
    fail("ENOSPC", "write", path)
  end
  node.text = text
  sb.pages_used = sb.pages_used + need
end

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
    local _ = d2
    fill(m2.sb, n2, text, path)
  else
    local sb = mnt.sb
    if mnt.flags.ro or sb.ro then fail("EROFS", "write", path) end
    if not fsdata.inode_room(sb) then fail("ENOSPC", "write", path) end
    sb.inodes_used = sb.inodes_used + 1
    local n2 = { text = "" }
    sb.nodes[full] = n2
    fill(sb, n2, text, path)
  end
  return true
end)

--- A file's content.
-- @function Space:read
Space.read = method("read", function(self, path)
  path = argcheck.path(path, "ns:read", 1, 3)
  newapi.touch(self, "read " .. path, path)
  local _, _, node = resolve(self, walkpath(path), "read", path)
  if node.dir then fail("EISDIR", "read", path) end
  return node.text
end)

--- Whether a path exists.
-- @function Space:exists
Space.exists = method("exists", function(self, path)
  path = argcheck.path(path, "ns:exists", 1, 3)
  newapi.touch(self, "exists " .. path, path)
  local ok = pcall(resolve, self, walkpath(path), "exists", path)
  return ok
end)

--- The names in a directory, sorted.
-- @function Space:ls
Space.ls = method("ls", function(self, path)
  path = argcheck.path(path, "ns:ls", 1, 3)
  newapi.touch(self, "ls " .. path, path)
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

-- The mounts of ns whose mount point is path (normalised), found down
-- the tree through the parents' index by mount point (world.attach_child)
-- instead of listing every mount: only the mounts whose mount point is a
-- prefix of path are visited.
local function mounts_at(ns, path)
  local out = {}
  local function visit(x, t) -- t: x's mount point in ns
    if t == path then out[#out + 1] = x end
    local at = x.at
    if not at then return end
    local rest = t == "/" and path or path:sub(#t + 1)
    local base = x.root
    -- the mount points on x whose place in ns is t, or t plus a prefix
    -- of rest ending at a component
    local here = at[base]
    if here then for _, c in ipairs(here) do visit(c, t) end end
    local i = 1
    while i <= #rest do
      local j = rest:find("/", i + 1, true) or #rest + 1
      local pre = rest:sub(1, j - 1)
      here = at[base == "/" and pre or base .. pre]
      if here then
        local ct = t == "/" and pre or t .. pre
        for _, c in ipairs(here) do visit(c, ct) end
      end
      i = j
    end
  end
  visit(ns.root, "/")
  return out
end

--- Whether the mount at path is locked (a less privileged namespace locks
-- what it inherited). Raises if path is not a mount.
-- @function Space:locked
Space.locked = method("locked", function(self, path)
  path = argcheck.path(path, "ns:locked", 1, 3)
  local p = walkpath(path)
  if #mounts_at(self, p) == 0 then error("locked " .. path .. ": not a mount point", 0) end
  -- the top one at p, as the probe's umount reaches
  local mnt = resolve(self, p, "locked", path)
  return mnt.locked
end)

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
  local root = opts.root ~= nil and mtable.normpath(opts.root, "ns:mounts", 1, 2) or nil
  -- a root view is the mountinfo of a process chrooted there: it has
  -- propagate_from, computed against that root (get_dominating_id)
  local with_from = opts.propagate_from or M.propagate_from or root ~= nil
  local gen, n = {}, 0
  local mounts = self.world.mounts
  for i = 1, #mounts do
    local m = mounts[i]
    if m.ns == self then
      n = n + 1
      records[n] = record_of(m, self, with_from, gen, root)
    end
  end
  if root then
    -- the kernel's view is a child's chroot(root): a root that is not
    -- there, or not a directory, is its refusal (returned, as the kernel
    -- namespace's ns:mounts returns it)
    local ok, top, dpath = pcall(function()
      local mnt, d, node = resolve(self, walkpath(root), "chroot", root)
      if not node.dir then errors.fail("ENOTDIR", "chroot", root) end
      return mnt, d
    end)
    if not ok then
      return nil, "mounts: cannot read the mountinfo under " .. root .. " of "
        .. tostring(self) .. ": " .. tostring(type(top) == "table" and top.message or top)
    end
    -- what the kernel lists for that root (show_mountinfo: a mount whose
    -- path does not pass through the root is skipped): the top mount at
    -- the root when the root is its own root, and the mounts below it
    -- (not a mount it covers: stacked at the same place, that one is
    -- under it, not reachable)
    local below = {}
    for i = 1, #mounts do
      local m = mounts[i]
      if m.ns == self then
        local a = m.parent
        while a and a ~= top do a = a.parent end
        below[i] = a == top or (m == top and dpath == top.root)
      end
    end
    local kept, nth = {}, 0
    for i = 1, #mounts do
      if mounts[i].ns == self then
        nth = nth + 1
        if not below[i] then records[nth] = false end -- its place kept: ipairs goes on
      end
    end
    for _, r in ipairs(records) do
      if r and is_subdir(r.target, root) then
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

--- The topmost mount at path, or nil (`ns:mounts():find(path)`): one
-- mount there (the usual case), or one of a stack there, found without
-- the whole table; other cases ask the table.
function Space:find(path, opts)
  check_open(self, "find")
  path = mtable.normpath(path, "ns:find", 1, 2)
  opts = argcheck.ns_options("find", opts, 2, 2)
  -- the root checked here, as the kernel's ns:find does: named as find's
  if opts.root ~= nil then
    mtable.normpath(opts.root, "ns:find", 2, 2)
    -- a root that cannot be read: its refusal raised, as the kernel's
    local t, err = self:mounts { root = opts.root }
    if not t then error(err, 2) end
    return t:find(path)
  end
  local at = mounts_at(self, path)
  if #at == 0 then return nil end
  local top = at[1]
  if #at > 1 then
    -- mountns.table's find: the one no other mount at path is stacked on,
    -- when there is exactly one; else the table decides
    local under, tops = {}, {}
    for _, m in ipairs(at) do if m.parent then under[m.parent] = true end end
    for _, m in ipairs(at) do if not under[m] then tops[#tops + 1] = m end end
    if #tops ~= 1 then return self:mounts():find(path) end
    top = tops[1]
  end
  return record_of(top, self, M.propagate_from, {})
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
  local root_parent = world.alloc_mount_id(w) -- (copied first, as the kernel does)
  local root = copy_tree(w, self.root, self.root.root, fl)
  local ns = new_ns(w, root, opts.label, user, root_parent)
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
  for _, m in ipairs(list) do world.depart(self.world, m) end
  -- the parent of its root goes with it
  world.free_mount_id(self.world, self.root_parent)
  self.closed = true
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

--- Mount events of this namespace (`mountns.namespace`'s `watch`, on the
-- model: model.events): the same forms, options and event shape; the
-- events are those of the calls made so far (a model namespace changes
-- only when called), so the iteration ends when they are out.
function Space:watch(opts)
  check_open(self, "watch")
  local a, b, c, d = events.watch(self, opts) -- (no tail call: the error levels)
  return a, b, c, d
end

-- the mount fd API (model.newapi): open_tree, move_mount, fsmount,
-- mount_setattr, with the kernel's rules and errno names
for _, name in ipairs { "open_tree", "move_mount", "fsmount", "mount_setattr" } do
  Space[name] = method(name, newapi[name])
end

for _, name in ipairs { "exec", "pid", "userns", "handle",
                        "chdir", "symlink" } do
  Space[name] = function(self)
    check_open(self, name)
    error("ns:" .. name .. ": not available in the model", 2)
  end
end

function Space:__tostring()
  return string.format("%s model:[%s]", self.label_, self.closed and "closed" or self.serial)
end

M.Space, M.is_namespace, M.new_ns = Space, is_ns, new_ns

return M
