--- explain: why a mount is where it is, or why it is not there.
-- Three sources, one text form (one sentence first, then one line per
-- fact or event):
--
-- - a model namespace (`mountns.model`): its world kept the history of
--   every call and of what the propagation rules did with it
--   (`world.events`), so the answer is that history;
-- - a kernel scenario namespace: the scenario recorded its steps
--   (`mountns.namespace.steps`), they are replayed in a model
--   (`model.replay`) and the model's history answers, as long as the
--   replay agrees with what the kernel did (it says so when not);
-- - a live process (`mountns show --explain PATH [PID]`, `explain.live`):
--   no history exists, only the current tables; the answer says what the
--   relations (peer group, master, the other namespaces holding peers and
--   slaves of the mount) mean for propagation from now on, and says that
--   it comes from the current state.
--
-- Why a separate module: expect's failure messages, `mountns.explain` and
-- `show --explain` share it; the model stays a model (no kernel), the
-- namespace class stays a recorder.
-- @module mountns.explain

local core = require "mountns.core"
local mtable = require "mountns.table"
local argcheck = require "mountns.args"
local model = require "mountns.model"
local namespace = require "mountns.namespace"
local mirror = require "mountns.mirror"
local escape = core.escape

local M = {}

-- ---- a live process: the current state ----------------------------------

-- The mount a path is on: the topmost mount at path, else at its nearest
-- ancestor that is a mount point. Returns the record and whether path
-- itself is its mount point.
local function mount_of(t, path)
  local p = path
  while true do
    local m = t:find(p)
    if m then return m, p == path end
    if p == "/" then return nil end
    p = p:match("^(.*)/[^/]*$")
    if p == "" then p = "/" end
  end
end

-- "mnt:[ID]" of a process's mount namespace, or nil and the error
local function ns_id(pid)
  local h, err = core.namespace(pid)
  if not h then return nil, err end
  local id = h:id()
  h:close()
  return "mnt:[" .. tostring(id) .. "]"
end

-- Every mount namespace this user can see, but the one given: a list of
-- {id = ID, pids = {...}, table = mount table}, by ID; and how many
-- processes could not be looked at (gone, or not allowed).
local function other_namespaces(skip)
  local names = core.readdir("/proc") or {}
  local by_id, list, hidden = {}, {}, 0
  for _, name in ipairs(names) do
    local pid = name:match("^%d+$") and tonumber(name)
    if pid then
      local id = ns_id(pid)
      if not id then
        hidden = hidden + 1
      elseif id ~= skip then
        local e = by_id[id]
        if not e then
          e = { id = id, pids = {} }
          by_id[id] = e
          list[#list + 1] = e
        end
        e.pids[#e.pids + 1] = pid
      end
    end
  end
  local out = {}
  for _, e in ipairs(list) do
    for _, pid in ipairs(e.pids) do -- the first process whose table reads
      local t = core.mountinfo(pid)
      if t then e.table = mtable.new(t); break end
    end
    if e.table then out[#out + 1] = e else hidden = hidden + #e.pids end
  end
  table.sort(out, function(a, b) return a.pids[1] < b.pids[1] end)
  return out, hidden
end

local function pids_text(pids)
  local shown = {}
  for i = 1, math.min(#pids, 3) do shown[i] = tostring(pids[i]) end
  local more = #pids > 3 and (", +" .. (#pids - 3)) or ""
  return (#pids == 1 and "PID " or "PIDs ") .. table.concat(shown, ", ") .. more
end

local function mount_text(m)
  return string.format("%s (mount %d, %s %s, root %s)", escape(m.target), m.id,
    escape(tostring(m.fstype)), escape(tostring(m.source or "none")), escape(tostring(m.root)))
end

-- The mounts of every namespace in `where` (list of {name, table}) for
-- which keep(m) holds, one line each.
local function listed(where, keep, skip)
  local lines = {}
  for _, w in ipairs(where) do
    for _, m in ipairs(w.table) do
      if m ~= skip and keep(m) then
        lines[#lines + 1] = "    " .. w.name .. ": " .. mount_text(m)
      end
    end
  end
  return lines
end

-- How many mounts keep() holds: in all, in this namespace, and how many
-- other namespaces hold the rest.
local function count_ns(where, keep, skip)
  local n, mine, nss = 0, 0, 0
  for _, w in ipairs(where) do
    local here = 0
    for _, m in ipairs(w.table) do
      if m ~= skip and keep(m) then here = here + 1 end
    end
    n = n + here
    if w.self then mine = here elseif here > 0 then nss = nss + 1 end
  end
  return n, mine, nss
end

local function plural(n, word)
  return n .. " " .. word .. (n == 1 and "" or (word:sub(-1) == "s" and "es" or "s"))
end

-- "2 peers in 1 other namespace", "1 slave in this namespace", "3 slaves
-- (1 in this namespace, 2 in 1 other namespace)": count_ns's counts, each
-- mount counted where it is; `none` says where no mount is ("no other
-- namespace")
local function spread(word, n, mine, nss, none)
  if n == mine then
    return string.format("%s in %s", plural(n, word), mine == 0 and none or "this namespace")
  elseif mine == 0 then
    return string.format("%s in %s", plural(n, word), plural(nss, "other namespace"))
  end
  return string.format("%s (%d in this namespace, %d in %s)", plural(n, word), mine,
    n - mine, plural(nss, "other namespace"))
end

--- Explain a mount of a live process from the current state: its peer
-- group and master, the mounts of every mount namespace the caller can
-- see (`/proc/*/mountinfo`) that are its peers, its slaves or its
-- masters, and what that means for propagation to and from it. No history
-- exists for a live process: the text says so, and says nothing of which
-- calls made the mount.
-- @tparam string path an absolute path in that process's namespace
-- @tparam[opt] integer pid the process (default: this one)
-- @treturn[1] string the text: one sentence, then the facts, one a line
-- @return[2] nil
-- @treturn[2] string the error reading the process's table
function M.live(path, pid)
  path = mtable.normpath(path, "explain.live", 1, 2)
  argcheck.pid(pid, "explain.live", 2, 2)
  local raw, err, errno = core.mountinfo(pid)
  if not raw then return nil, err, errno end
  local t = mtable.new(raw)
  local me = ns_id(pid) or "?"
  local who = (pid and ("PID " .. pid) or "this process") .. " (" .. tostring(me) .. ")"
  local m, exact = mount_of(t, path)
  local out = {}
  if not m then
    return string.format("%s: nothing is mounted at %s or above it in %s's namespace "
      .. "(from its current mount table, not from history)", escape(path), escape(path), who)
  end
  local others, hidden = other_namespaces(me)
  local where = { { name = "this namespace", table = t, self = true } }
  for _, o in ipairs(others) do
    where[#where + 1] = { name = o.id .. " (" .. pids_text(o.pids) .. ")", table = o.table }
  end
  local parent = t:by_id(m.parent_id)
  local shared, master = m.shared, m.master

  local function peer(x) return shared and x.shared == shared end
  local function slave(x) return shared and x.master == shared end
  local function of_master(x) return master and x.shared == master end
  local npeers, peers_here, peer_ns = count_ns(where, peer, m)
  local nslaves, slaves_here, slave_ns = count_ns(where, slave, m)

  -- the sentence
  local what
  if shared and master then
    what = string.format("shared in peer group %d and a slave of peer group %d", shared, master)
  elseif shared then
    what = "shared in peer group " .. shared
  elseif master then
    what = "a slave of peer group " .. master
  else
    what = m.unbindable and "unbindable (private, and no bind mount may copy it)" or "private"
  end
  local rel = {}
  if shared then
    rel[#rel + 1] = spread("peer", npeers, peers_here, peer_ns, "no other namespace")
    if nslaves > 0 then
      rel[#rel + 1] = spread("slave", nslaves, slaves_here, slave_ns)
    end
  end
  local means
  if shared and master then
    means = "mounts and unmounts under it reach its peers and slaves, and those under its "
      .. "peers or its master's group reach it"
  elseif shared then
    means = "mounts and unmounts under it reach its peers and slaves, and those under its "
      .. "peers reach it"
  elseif master then
    means = "mounts and unmounts under its master's group reach it; its own go nowhere"
  else
    means = "nothing propagates to or from it"
  end
  out[1] = string.format("%s in %s %s %s%s: %s (from the current state, not history).",
    escape(path), who, exact and "is" or ("is not a mount point; it lies on " .. escape(m.target)
    .. ", which is"), what, #rel > 0 and (" with " .. table.concat(rel, " and ")) or "", means)
  out[2] = "  No history exists for a live process: this says what the relations of the "
    .. "mount mean now, not which calls made them."
  out[3] = "  the mount: " .. mount_text(m) .. ", " .. tostring(m.propagation)
  if shared then
    local lines = listed(where, peer, m)
    out[#out + 1] = string.format("  peer group %d (mounts and unmounts under any of them "
      .. "propagate to all)%s", shared, #lines == 0 and ": no other member" or ":")
    for _, l in ipairs(lines) do out[#out + 1] = l end
    lines = listed(where, slave, m)
    if #lines > 0 then
      out[#out + 1] = string.format("  slaves of peer group %d (receive from it, send "
        .. "nothing back):", shared)
      for _, l in ipairs(lines) do out[#out + 1] = l end
    end
  end
  if master then
    local lines = listed(where, of_master, m)
    out[#out + 1] = string.format("  its master, peer group %d (what is mounted under it "
      .. "arrives here; nothing goes back)%s", master,
      #lines == 0 and ": no member visible to you" or ":")
    for _, l in ipairs(lines) do out[#out + 1] = l end
  end
  if m.propagate_from then
    out[#out + 1] = string.format("  propagate_from:%d: the nearest peer group above its "
      .. "master that is visible from this process's root", m.propagate_from)
  end
  -- whether the mount point itself (mounting or unmounting at path)
  -- propagates: the parent's relations decide
  if exact and parent and parent ~= m then
    local p = parent
    local how
    if p.shared then
      how = string.format("shared in peer group %d: a mount or unmount at %s propagates to "
        .. "the parent's peers and slaves", p.shared, escape(path))
    elseif p.master then
      how = string.format("a slave of peer group %d: what its master's group mounts at %s "
        .. "arrives here, nothing made here leaves", p.master, escape(path))
    else
      how = string.format("private: a mount or unmount at %s here reaches no other mount",
        escape(path))
    end
    out[#out + 1] = string.format("  its parent %s is %s", mount_text(p), how)
  end
  if hidden > 0 then
    out[#out + 1] = string.format("  not seen: %s whose mount namespace could not be read "
      .. "(gone, or not yours)", plural(hidden, "process"))
  end
  return table.concat(out, "\n") .. "\n"
end

-- ---- history: a model world's events --------------------------------------

-- The calls that put a mount at a path: the verb of the sentence, and
-- where the call text ("bind /X /Z") has its mount point.
local VERBS = { mount = "mounted", bind = "bound", rbind = "bound (recursively)",
                move = "moved" }

-- The call events of a world, each with the events it made: a list of
-- {call = event, events = {...}, op = "bind", path = "/Z" (the mount point
-- of a mount, bind, rbind or move; the path of a make-*), failed = true}.
local function groups_of(w)
  local groups, g = {}, nil
  for _, e in ipairs(w.events) do
    if e.kind == "call" then
      local op, rest = tostring(e.call):match("^(%S+)%s*(.*)$")
      g = { call = e, events = {}, op = op }
      if VERBS[op] then
        g.src = e.source or rest:match("^(/[^ ]*) /")
      end
      if e.target then
        g.path = e.target
      elseif VERBS[op] then
        g.path = rest:match("(/[^ ]*)$")
      elseif op and op:match("^make%-") then
        g.path = rest:match("^(/[^ ]*)")
      end
      groups[#groups + 1] = g
    elseif g then
      g.events[#g.events + 1] = e
      if e.kind == "error" then g.failed = true end
    end
  end
  return groups
end

-- The namespaces' parents: model namespace -> the namespace whose unshare
-- made it (the k-th unshare that did not fail made the (k+1)-th
-- namespace), and its call group.
local function parents_of(w, groups)
  local out, k = {}, 1
  for _, g in ipairs(groups) do
    if g.op == "unshare" and not g.failed then
      k = k + 1
      local ns = w.namespaces[k]
      if ns then out[ns:label()] = { from = g.call.ns, group = g } end
    end
  end
  return out
end

local is_under = mtable.is_under

-- How a call group is named on a line: the scenario's own call and line
-- when the world replays a kernel scenario's steps, else the model's text.
local function call_name(g)
  local step = g.call.step
  if step then
    return string.format("%s (%s)", mirror.call_text(step, g.call.ns), mirror.where_text(step))
  end
  return string.format("%s in %s", escape(tostring(g.call.call)), tostring(g.call.ns))
end

local function event_line(e)
  if e.kind == "call" then
    local step = e.step
    return string.format("  #%d %s: %s%s", e.seq, tostring(e.ns), escape(tostring(e.call)),
      step and ("  [" .. mirror.call_text(step, e.ns) .. ", " .. mirror.where_text(step) .. "]")
        or "")
  end
  return string.format("  #%d   %s %s%s%s%s", e.seq, e.kind,
    e.target and (escape(e.target) .. " ") or "",
    "in " .. tostring(e.ns),
    e.via and (" via " .. e.via) or "",
    e.rule and (": " .. escape(tostring(e.rule))) or "")
end

-- The sentence for a rule that stopped a call in its own namespace:
-- "/Z was bound in sh1 under /, which is private in sh1: no propagation
-- to sh2".
local function blocked_sentence(path, g, e, label)
  local rule = tostring(e.rule)
  local head, tail = rule:match("^(.-) is (.*)$")
  local said = head and (head .. ", which is " .. tail) or rule
  if said:match("no propagation$") then said = said .. " to " .. label end
  return string.format("%s was %s in %s under %s.", escape(path), VERBS[g.op] or g.op,
    tostring(g.call.ns), escape(said))
end

-- Why path is in (or not in) the model namespace mns: the sentence and
-- the events of the chain (a list, seq order), from world w.
local function why(w, mns, path, depth)
  local label = mns:label()
  local groups = groups_of(w)
  local t = mns:mounts()
  local m = t:find(path)
  local chain = {}
  local function add(e) chain[#chain + 1] = e end
  local function add_group(g, keep)
    add(g.call)
    for _, e in ipairs(g.events) do
      if not keep or keep(e) then add(e) end
    end
  end
  -- the calls that made the mount at `at` in namespace `ns` what it is
  -- (make-shared /X ...): added to the chain
  local function propagation_history(ns, at)
    for _, g in ipairs(groups) do
      if g.call.ns == ns and g.op and g.op:match("^make%-") and g.path == at then add(g.call) end
    end
  end
  -- An event's path as it is now: its target (the path when it happened)
  -- carried along by the moves made later in its namespace.
  local function now_path(e, gi)
    local p = e.target
    for j = gi, #groups do -- the move itself too: its copies are named before it attaches
      local g = groups[j]
      if p and g.op == "move" and g.call.ns == e.ns and g.src and g.path and not g.failed
         and is_under(p, g.src) and g.src ~= "/" then
        p = g.path .. p:sub(#g.src + 1)
      end
    end
    return p
  end
  if m then
    -- the last event that put a mount at path in this namespace
    local found, found_g
    for gi, g in ipairs(groups) do
      if g.call.ns == label and VERBS[g.op] and g.path == path and not g.failed then
        found, found_g = g.call, g
      end
      for _, e in ipairs(g.events) do
        if e.ns == label and e.target and now_path(e, gi) == path then
          if e.kind == "propagated" then found, found_g = e, g
          elseif e.kind == "removed" then found, found_g = nil, nil end
        end
      end
    end
    if not depth then
      chain.now = string.format("  now: %s in %s is %s%s", escape(path), label,
        tostring(m.propagation), m.shared and (" (peer group " .. m.shared
        .. (m.master and (", master " .. m.master) or "") .. ")")
        or (m.master and (" (master " .. m.master .. ")") or ""))
    end
    local now = ""
    if found and found.kind == "call" then
      add_group(found_g, function(e) return e.kind ~= "error" end)
      propagation_history(label, path)
      return string.format("%s in %s was %s there by %s.%s", escape(path), label,
        VERBS[found_g.op] or found_g.op, call_name(found_g), now), chain
    elseif found then
      add_group(found_g, function(e) return e == found or e.ns == found.from_ns end)
      local moved = found.target ~= path and (", made at " .. escape(found.target)
        .. " (now " .. escape(path) .. ")") or ""
      return string.format("%s in %s is a copy of %s, propagated from %s through %s%s (%s).%s",
        escape(path), label, call_name(found_g), tostring(found.from_ns),
        tostring(found.via), moved, escape(tostring(found.rule)), now), chain
    end
    -- no event here: the namespace was copied with it
    local parent = parents_of(w, groups)[label]
    if parent then
      add(parent.group.call)
      local pns
      for _, o in ipairs(w.namespaces) do if o:label() == parent.from then pns = o end end
      local more = ""
      if pns and (depth or 0) < 4 then
        local s2, c2 = why(w, pns, path, (depth or 0) + 1)
        local verb, by = s2:match("^%S+ in %S+ was (.-) there by (.*)%.$")
        more = verb and (", where it was " .. verb .. " by " .. by) or (": " .. s2:gsub("%.$", ""))
        for _, e in ipairs(c2) do add(e) end
      end
      return string.format("%s in %s came with %s itself: %s copied the mounts of %s%s.%s",
        escape(path), label, label, call_name(parent.group), parent.from, more, now), chain
    end
    if not t:by_id(m.parent_id) or m.parent_id == m.id then
      return string.format("%s in %s was there from the start (the scenario's first mount).%s",
        escape(path), label, now), chain
    end
    return string.format("%s in %s: no event of the history put a mount at this path (a "
      .. "copy made under a mount that was moved later keeps the path it had then).%s",
      escape(path), label, now), chain
  end

  -- A call g whose copies went elsewhere, not to this namespace: where
  -- they went, and what this namespace has where the mount would be.
  local function elsewhere(g, head, copies)
    add_group(g, function(x) return x.kind ~= "error" end)
    local on = mount_of(t, path)
    local reached = {}
    for _, e in ipairs(g.events) do
      if e.kind == "propagated" then
        reached[#reached + 1] = tostring(e.ns) .. (e.target ~= path and (" at "
          .. escape(tostring(e.target))) or "")
      end
    end
    if on then propagation_history(label, on.target) end
    local went = #reached > 0 and ((copies and " put copies in " or " and propagated to ")
      .. table.concat(reached, ", ")) or ""
    return string.format("%s%s, but %s %s: %s", head, went, copies and "none in" or "not to",
      label,
      on and string.format("%s in %s, where it would be, is %s%s.",
        escape(on.target), label, tostring(on.propagation),
        on.shared and (" in peer group " .. on.shared .. ", not one that received it")
          or on.master and (" (master " .. on.master .. "), not a slave of one that "
            .. "received it") or ": nothing propagates to it")
        or "no mount of " .. label .. " holds that path.")
  end

  -- not there: unmounted here?
  for i = #groups, 1, -1 do
    local g = groups[i]
    for _, e in ipairs(g.events) do
      if e.kind == "removed" and e.ns == label and e.target == path then
        add_group(g, function(x) return x == e end)
        return string.format("%s is not in %s: it was unmounted by %s (%s).", escape(path),
          label, call_name(g), escape(tostring(e.rule))), chain
      end
    end
  end
  -- moved away from here?
  for i = #groups, 1, -1 do
    local g = groups[i]
    if g.op == "move" and g.src == path and g.call.ns == label and not g.failed then
      add_group(g, function(x) return x.kind ~= "error" end)
      return string.format("%s is not in %s: %s moved it to %s.", escape(path), label,
        call_name(g), escape(tostring(g.path))), chain
    end
    if VERBS[g.op] and g.path == path and g.call.ns == label and not g.failed then break end
  end
  -- a call that put a mount at this path: stopped where?
  local sentence
  for i = #groups, 1, -1 do
    local g = groups[i]
    if VERBS[g.op] and g.path == path and not g.failed and g.call.ns == label then
      -- made here, and gone (covered, or taken by a call mountns did not see)
      add_group(g, function(x) return x.kind ~= "error" end)
      sentence = string.format("%s is not in %s, though %s put a mount there: no later "
        .. "event of the history took it away.", escape(path), label, call_name(g))
      break
    end
    if VERBS[g.op] and g.path == path and not g.failed then
      for _, e in ipairs(g.events) do
        -- the receiving side in this namespace stopped it
        if not sentence and e.kind == "blocked" and e.ns == label then
          add_group(g, function(x) return x.kind ~= "error" end)
          sentence = string.format("%s was %s in %s, but %s.", escape(path),
            VERBS[g.op] or g.op, tostring(g.call.ns), escape(tostring(e.rule)))
        end
      end
      for _, e in ipairs(g.events) do
        -- the call's own side stopped it: its parent private or a slave
        if not sentence and e.kind == "blocked" and e.ns == g.call.ns then
          add_group(g, function(x) return x.kind ~= "error" end)
          propagation_history(g.call.ns, e.target)
          sentence = blocked_sentence(path, g, e, label)
        end
      end
      if not sentence then
        sentence = elsewhere(g, string.format("%s was %s in %s", escape(path),
          VERBS[g.op] or g.op, tostring(g.call.ns)))
      end
      break
    end
  end
  if not sentence then
    -- copies of a call made elsewhere arrived at this path in other
    -- namespaces, not in this one
    for i = #groups, 1, -1 do
      local g = groups[i]
      for _, e in ipairs(g.events) do
        if not sentence and e.kind == "propagated" and e.target == path and e.ns ~= label then
          sentence = elsewhere(g, string.format("%s is not in %s: %s", escape(path), label,
            call_name(g)), true)
        end
      end
      if sentence then break end
    end
  end
  if not sentence then
    -- blocked on the receiving side at a mount above path
    for i = #groups, 1, -1 do
      for _, e in ipairs(groups[i].events) do
        if not sentence and e.kind == "blocked" and e.ns == label and e.target and e.via
           and e.target ~= path and is_under(path, e.target) then
          add_group(groups[i], function(x) return x == e end)
          sentence = string.format("%s is not in %s: %s was stopped there (%s).", escape(path),
            label, call_name(groups[i]), escape(tostring(e.rule)))
        end
      end
    end
  end
  if not sentence then
    -- an rbind that would have copied a mount here, had it not been unbindable
    for i = #groups, 1, -1 do
      local g = groups[i]
      if not sentence and g.op == "rbind" and g.src and g.path and not g.failed
         and g.call.ns == label and path ~= g.path and is_under(path, g.path) then
        local from = g.src == "/" and path:sub(#g.path + 1) or (g.src .. path:sub(#g.path + 1))
        local src = t:find(from)
        if src and src.unbindable then
          add_group(g, function(x) return x.kind ~= "error" end)
          propagation_history(label, from)
          sentence = string.format("%s is not in %s: %s copied the mounts under %s but "
            .. "skipped %s, which is unbindable.", escape(path), label, call_name(g),
            escape(g.src), escape(from))
        end
      end
    end
  end
  return sentence or string.format("%s is not in %s: no call mounted anything at %s and no "
    .. "copy reached it, in any namespace of this world.", escape(path), label,
    escape(path)), chain
end

-- A kernel scenario's answer names the kernel's peer groups, not the
-- model's: the open namespaces of both sides list the same mounts in the
-- same order (what --both checks), so their records pair up, and each
-- model group ID maps to the kernel's. A group no open mount has any more
-- keeps the model's number, marked "(model)".
local function kernel_groups(text, w)
  local map = {}
  local kernel = namespace.open_namespaces()
  local mine = model.open_namespaces(w)
  if #kernel ~= #mine then return text end
  for i, kns in ipairs(kernel) do
    local ok, kt = pcall(kns.mounts, kns)
    local mt = mine[i]:mounts()
    if ok and kt and #kt == #mt then
      for j, r in ipairs(mt) do
        for _, f in ipairs { "shared", "master" } do
          if r[f] and kt[j][f] then map[r[f]] = kt[j][f] end
        end
      end
    end
  end
  local function to(word)
    return function(n)
      local k = map[tonumber(n)]
      return word .. " " .. (k and tostring(k) or (n .. " (model)"))
    end
  end
  return (text:gsub("peer group (%d+)", to("peer group")):gsub("master (%d+)", to("master")))
end

local function chain_text(chain)
  table.sort(chain, function(a, b) return a.seq < b.seq end)
  local out, seen = {}, {}
  for _, e in ipairs(chain) do
    if not seen[e] then
      seen[e] = true
      out[#out + 1] = event_line(e)
    end
  end
  return out
end

--- Why a mount is at path in ns, or why none is: one sentence, then the
-- chain of events behind it, one line each (`#seq ns: call` for a call,
-- `#seq   kind target in ns via ...: rule` for what the rules did with
-- it). On a model namespace (`mountns.model`) from its world's history;
-- on a kernel scenario's namespace from the scenario's recorded steps
-- (`mountns.namespace.steps`) replayed in a model, whose answer is the
-- kernel's as long as the replay agrees with what the kernel did: a line
-- says so when an outcome differed, and which steps the model could not
-- replay (`ns:run`, `ns:exec`).
-- @param ns a model namespace or a kernel scenario namespace
-- @tparam string path an absolute path in ns
-- @treturn string the text (lines end with "\n")
-- @usage print(mountns.explain(sh2, "/Z")) -- "/Z was bound in sh1 under /, ..."
function M.explain(ns, path)
  path = mtable.normpath(path, "explain", 2, 2)
  local w, mns, extra = nil, nil, {}
  if model.is_namespace(ns) then
    w, mns = ns.world, ns
  elseif namespace.is_namespace(ns) then
    if ns.closed then argcheck.error("explain", 1, "the namespace is closed", 2) end
    local steps = namespace.steps()
    local by_serial, first, replay
    w, by_serial, first, replay = model.replay(steps,
      { locked_root = not mirror.in_initial_userns() })
    mns = by_serial[ns.serial]
    if first then
      extra[#extra + 1] = string.format("  (the model's replay differs from the kernel at step "
        .. "%d, %s: %s: %s; this answer may be wrong from there)", first.index,
        mirror.where_text(first.step), mirror.call_text(first.step), first.why)
    end
    for _, line in ipairs(replay:note_lines()) do
      extra[#extra + 1] = "  (" .. line:gsub("; the tables were compared after it", "")
        .. ": this answer leaves it out)"
    end
    if not mns or mns.closed then
      return "explain: the model has no counterpart of " .. tostring(ns) .. "\n"
    end
  else
    argcheck.error("explain", 1, "a scenario or model namespace expected, got "
      .. type(ns), 2)
  end
  local sentence, chain = why(w, mns, path)
  local out = { sentence }
  for _, l in ipairs(chain_text(chain)) do out[#out + 1] = l end
  out[#out + 1] = chain.now
  for _, l in ipairs(extra) do out[#out + 1] = l end
  local text = table.concat(out, "\n") .. "\n"
  if namespace.is_namespace(ns) then text = kernel_groups(text, w) end
  return text
end

--- The first sentence of `explain`, or nil when no model can answer (a
-- namespace of neither kind, an error): for expect's "why:" line, which
-- must never hide the failure it comes with.
-- @param ns
-- @tparam string path
-- @treturn string|nil
function M.why(ns, path)
  local ok, text = pcall(M.explain, ns, path)
  if not ok or type(text) ~= "string" then return nil end
  return text:match("^[^\n]*")
end

return M
