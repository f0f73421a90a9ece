--- record: the vocabulary of a mount record, in one place.
-- A record is one mount as the core builds it (mountinfo.c from
-- /proc/PID/mountinfo, statmount.c from statmount(2)): the fields below,
-- with `propagation` the word the core computes from the flags
-- (`lmns_propagation` in csrc/: "private", "shared", "slave",
-- "shared,slave", ... "unbindable"; no Lua code recomputes it). What is
-- said about records anywhere in mountns — which fields there are, when two
-- records are the same mount, how the optional fields read — is said here;
-- format, dot, watch, expect, diff and `mountns show` use it.
-- @module mountns.record

local M = {}

--- The fields of a record, in the core's order (csrc/statmount.c
-- `key_names`): `id`, `parent_id`, `major`, `minor`, `root`, `target`,
-- `options`, `fstype`, `source`, `super_options`, `shared`, `master`,
-- `propagate_from`, `unbindable`, `propagation`. The JSON of `format` and
-- `mountns show --json` lists them in this order. (A statmount record may
-- fill `propagate_from` on first access: reading the fields by name gives
-- a copy that has it.)
M.FIELDS = { "id", "parent_id", "major", "minor", "root", "target",
             "options", "fstype", "source", "super_options", "shared",
             "master", "propagate_from", "unbindable", "propagation" }

--- The fields only statmount records have, unique for the kernel's
-- lifetime (64-bit unique mount IDs): different on every run.
M.UNIQUE = { "unique_id", "parent_unique_id" }

--- The fields whose change makes a mount "changed" (`mountns.diff`,
-- the events of `mountns.watch`, which also compare `target`).
M.CHANGES = { "propagation", "shared", "master", "propagate_from",
              "unbindable", "options", "super_options", "parent_id" }

--- The words a record's `propagation` may be, as the core computes them
-- (csrc/record.c, `propagation_words`): "private", or "shared", "slave"
-- and "unbindable" joined by commas in this order. The checks of
-- mountns.expect accept exactly these.
M.PROPAGATIONS = { "private", "shared", "slave", "shared,slave", "unbindable",
                   "shared,unbindable", "slave,unbindable", "shared,slave,unbindable" }

--- The identity of a mount, as a string: the 64-bit unique mount ID where
-- the record has one ("u" .. ID: statmount records, fanotify events), else
-- the mount ID, mount point, root and device. The kernel reuses a freed
-- mount ID at once, so an ID alone does not say "same mount".
-- @tparam table m a record (or `{unique_id = N}`)
-- @treturn string
function M.key(m)
  if m.unique_id then return "u" .. tostring(m.unique_id) end
  return string.format("%d %s %s %d:%d", m.id, m.target, m.root, m.major, m.minor)
end

--- Whether two records describe the same mount: the unique mount ID when
-- both have one, else the mount ID, mount point, root and device, so a
-- record from a mountinfo table is found again in a statmount table and
-- the other way round.
-- @tparam table a a record
-- @tparam table b a record
-- @treturn boolean
function M.same(a, b)
  if a.unique_id and b.unique_id then return a.unique_id == b.unique_id end
  return a.id == b.id and a.target == b.target and a.root == b.root
    and a.major == b.major and a.minor == b.minor
end

--- The optional fields as /proc/PID/mountinfo writes them (show_mountinfo):
-- "shared:N master:M propagate_from:P unbindable", those the record has,
-- separated by one space; "" when it has none (a private mount).
-- @tparam table m a record
-- @treturn string
function M.optional(m)
  return M.optional_of(m.shared, m.master, m.propagate_from, m.unbindable)
end

--- The optional fields of `optional` from the four values (a caller that
-- renumbers the groups passes the new numbers; no record is built).
-- @param shared the peer group, or nil
-- @param master the master's peer group, or nil
-- @param propagate_from or nil
-- @param unbindable true or nil
-- @treturn string
function M.optional_of(shared, master, propagate_from, unbindable)
  -- concatenated as it goes: no table (golden texts make one a mount)
  local text = shared and "shared:" .. tostring(shared) or ""
  if master then
    text = (text == "" and "" or text .. " ") .. "master:" .. tostring(master)
  end
  if propagate_from then
    text = (text == "" and "" or text .. " ") .. "propagate_from:" .. tostring(propagate_from)
  end
  if unbindable then text = text == "" and "unbindable" or text .. " unbindable" end
  return text
end

--- The peer groups of a record: "shared:N master:M", "shared:N",
-- "master:M", or "" (the GROUPS column of a diagnostic).
-- @tparam table m a record
-- @treturn string
function M.groups(m)
  return M.optional { shared = m.shared, master = m.master }
end

return M
