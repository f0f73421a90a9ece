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

local function count_ns(where, keep, skip)
  local n, nss = 0, 0
  for _, w in ipairs(where) do
    local here = 0
    for _, m in ipairs(w.table) do
      if m ~= skip and keep(m) then here = here + 1 end
    end
    n = n + here
    if here > 0 and not w.self then nss = nss + 1 end
  end
  return n, nss
end

local function plural(n, word)
  return n .. " " .. word .. (n == 1 and "" or (word:sub(-1) == "s" and "es" or "s"))
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
  if pid ~= nil and (type(pid) ~= "number" or pid < 1 or pid ~= math.floor(pid)) then
    argcheck.error("explain.live", 2, "PID expected, got " .. tostring(pid), 2)
  end
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
  local npeers, peer_ns = count_ns(where, peer, m)
  local nslaves, slave_ns = count_ns(where, slave, m)

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
    rel[#rel + 1] = string.format("%s in %s", plural(npeers, "peer"),
      peer_ns == 0 and "no other namespace" or plural(peer_ns, "other namespace"))
    if nslaves > 0 then
      rel[#rel + 1] = string.format("%s in %s", plural(nslaves, "slave"),
        slave_ns == 0 and "this namespace" or plural(slave_ns, "other namespace"))
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

return M
