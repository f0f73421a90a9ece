-- model.propagate: shared-subtree propagation (fs/pnode.c): who receives
-- what a mount sends (its peers, then its slaves' groups, in the kernel's
-- order), attach_recursive_mnt with the copies it propagates, the changes
-- of a mount's propagation type (do_make_slave), and the walk of a
-- propagation tree that umount before 6.16 made (propagation_next).

local world = require "mountns.model.world"
local paths = require "mountns.model.paths"

local M = {}

local is_subdir = paths.is_subdir
local index_of, remove_value, NONE = world.index_of, world.remove_value, world.NONE
local new_group, event, label_of = world.new_group, world.event, world.label_of
local target_of, target_at, subtree = world.target_of, world.target_at, world.subtree
local copy_tree, child_at, set_ns = world.copy_tree, world.child_at, world.set_ns
local attach_child, detach_child, set_shared = world.attach_child, world.detach_child,
  world.set_shared
local leave_group = world.leave_group

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

local function same_group(a, b)
  return a == b or (a.group ~= nil and a.group == b.group)
end

-- commit_tree: a tree attached from no namespace (a new mount, a copy, a
-- detached tree of open_tree's clone or fsmount, made maybe long before)
-- joins the namespace list at its tail, just before the copies
-- propagation committed after it (`at`, their first place in w.mounts).
-- Before 6.8 mountinfo lists that list (rules.ns_list): the 5.10 guest
-- listed a clone attached after a later mount after that mount. Most
-- trees are there already, made just now: checked first.
local function list_at_tail(w, tree, at)
  local mounts, n, mine = w.mounts, #tree, {}
  for _, m in ipairs(tree) do mine[m] = true end
  local there = at - n >= 1
  for i = at - n, at - 1 do
    if not there or not mine[mounts[i]] then there = false; break end
  end
  if there then return end
  local out = {}
  for i = 1, at - 1 do if not mine[mounts[i]] then out[#out + 1] = mounts[i] end end
  for i = 1, at - 1 do if mine[mounts[i]] then out[#out + 1] = mounts[i] end end
  for i = at, #mounts do out[#out + 1] = mounts[i] end
  w.mounts = out
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
      -- the copy goes under what is mounted there (mnt_change_mountpoint);
      -- from 7.1 it takes a locked mount's lock (rules.tuck_takes_lock),
      -- which 7.1 then clears on the mount on top; from 7.2 only the mount
      -- the caller placed does that, a propagated copy leaves it locked
      -- (rules.tuck_unlocks_top)
      if q.locked and w.rules.tuck_takes_lock then
        child.locked = true
        if w.rules.tuck_unlocks_top then q.locked = false end
      end
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
  if w.rules.ns_list and not ctx.moving then
    list_at_tail(w, subtree(source), ranges[1] and ranges[1][1] or #w.mounts + 1)
  end
end

-- do_make_slave: m leaves its group (its slaves go to a peer with the same
-- root, else the next peer, else to m's master; with none, they become
-- private) and becomes a slave of that peer or of its master.
local function make_slave(w, m)
  local rules = w.rules
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
    leave_group(w, m)
  else
    leave_group(w, m)
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
  make_slave(w, m)
  if kind ~= "slave" then
    if m.master then remove_value(m.master.slaves, m) end
    m.master = nil
    m.unbindable = kind == "unbindable"
  end
end

-- ---- the walk of a propagation tree (umount before Linux 6.16) ---------------

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

M.ring_from, M.receivers, M.attach = ring_from, receivers, attach
M.make_slave, M.change_propagation = make_slave, change_propagation
M.next_peer, M.propagation_next = next_peer, propagation_next
M.skip_propagation_subtree = skip_propagation_subtree

return M
