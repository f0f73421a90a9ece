-- model.umount: umount2(2) and what it takes with it: umount_tree, the
-- mounts propagate_umount unmounts in the copies (Linux 6.16+, and the
-- rules before its rewrite: rules.old_umount), the over-mounts reparented,
-- and the unmounted mounts taken out of propagation (one at a time, or
-- all at once: rules.bulk_private).

local flagsets = require "mountns.flags"
local world = require "mountns.model.world"
local propagate = require "mountns.model.propagate"
local paths = require "mountns.model.paths"
local errors = require "mountns.model.errors"

local M = {}

local fail, walkpath = errors.fail, paths.walkpath
local index_of, remove_value, NONE = world.index_of, world.remove_value, world.NONE
local event, label_of, target_of, subtree = world.event, world.label_of, world.target_of,
  world.subtree
local child_at, attach_child, detach_child = world.child_at, world.attach_child,
  world.detach_child
local resolve, mount_root = world.resolve, world.mount_root
local leave_group = world.leave_group
local unlink_child = world.unlink_child
local receivers, change_propagation = propagate.receivers, propagate.change_propagation
local propagation_next, skip_propagation_subtree = propagate.propagation_next,
  propagate.skip_propagation_subtree

-- bulk_make_private (rules.bulk_private): the mounts of list (the
-- unmounted set, in umount_tree's order) leave their peer groups and
-- masters; trace_transfers: each one's slaves go to its next peer, else
-- its master, followed past the mounts of the set to the first that
-- stays (or nowhere: private); then, in the set's order, each one's
-- slaves go in front of that mount's list as one block.
local function bulk_make_private(w, list)
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
        else
          nx = x.master
        end
        leave_group(w, x)
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
    bulk_make_private(w, list)
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
    world.depart(w, m)
  end
end

-- ---- umount before Linux 6.16 (rules.old_umount) ------------------------------

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
    unlink_child(m)
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
    unlink_child(c)
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
      unlink_child(c)
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

-- whether ns may act on the superblock sb: CAP_SYS_ADMIN in the user
-- namespace that owns it (its own, or one of its ancestors)
local function owns_sb(ns, sb)
  local u = sb.user
  while u and u ~= ns.user do u = ns.world.user_parent[u] end
  return u == ns.user
end

-- umount2 of the caller's root without MNT_DETACH (do_umount_root): the
-- superblock is remounted read-only, nothing is unmounted
local function umount_root(ns, mnt, target)
  if not owns_sb(ns, mnt.sb) then fail("EPERM", "umount", target) end
  mnt.sb.ro = true
  mnt.sb.super_options = mnt.sb.super_options:gsub("^rw", "ro")
  return true
end

local function umount_op(ns, target, names)
  local op = "umount"
  local lazy, force, expire = false, false, false
  for _, n in ipairs(names) do
    if flagsets.umount[n].lazy then lazy = true end
    if n == "force" then force = true end
    if n == "expire" then expire = true end
  end
  local mnt, dpath = resolve(ns, walkpath(target), op, target)
  if not mount_root(mnt, dpath) then fail("EINVAL", op, target) end
  if mnt.locked then fail("EINVAL", op, target) end
  -- MNT_FORCE: a plain umount here (tmpfs and ramfs have no
  -- umount_begin), from a user namespace too (measured on 6.18: ok as
  -- uid 65534 in a scenario's user namespace, spec 45)
  if expire then
    -- the first MNT_EXPIRE marks an idle mount (EAGAIN), the second
    -- unmounts it unless something used it since (mntput clears the
    -- mark: model.newapi.touch)
    if mnt == ns.root or lazy or force then fail("EINVAL", op, target) end
    if #mnt.children > 0 or (mnt.fd_refs or 0) > 0 then fail("EBUSY", op, target) end
    if not mnt.expiry_mark then
      mnt.expiry_mark = true
      ns.world.expiry_marks_ = true
      fail("EAGAIN", op, target)
    end
  end
  if mnt == ns.root and not lazy then return umount_root(ns, mnt, target) end
  return umount_mount(ns, mnt, lazy, target)
end

-- umount2(2) of the mount mnt (found at target), with MNT_DETACH if lazy
function umount_mount(ns, mnt, lazy, target)
  local op = "umount"
  if mnt.locked then fail("EINVAL", op, target) end
  if not mnt.parent then
    -- the kernel's namespace is then left without its mounts while its
    -- processes keep the detached tree as their root (listmount: none;
    -- mount: ENOENT): a namespace without a root, which the model has not
    error("ns:umount: a lazy umount of the root of a namespace is not available in the "
      .. "model", 0)
  end
  -- an open mount fd holds the mount (open_tree: model.newapi)
  if not lazy and (#mnt.children > 0 or (mnt.fd_refs or 0) > 0) then
    fail("EBUSY", op, target)
  end
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
  -- takes a copy of the unmounted mount itself, unlocked first: spec 22
  -- "a locked copy goes too".)
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
  -- unmounted mount itself goes (umount_tree unlocked it first:
  -- propagate_mount_unlock), and so does one whose parent goes
  -- (handle_locked): 6.18's source, and what it did in every case tried
  -- (spec 22 "locked copies").
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

M.umount_op, M.umount_mount = umount_op, umount_mount

return M
