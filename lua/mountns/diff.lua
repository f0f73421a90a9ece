--- diff: what one event did to the mount table of one namespace.
-- @module mountns.diff

local M = {}

-- The kernel reuses a freed mount ID at once, so an ID alone does not say
-- "same mount": use the 64-bit unique mount ID where the records have one,
-- else the ID plus mount point, root and device.
local function key(m)
  if m.unique_id then return "u" .. tostring(m.unique_id) end
  return string.format("%d %s %s %d:%d", m.id, m.target, m.root, m.major, m.minor)
end

--- Whether two records describe the same mount (by the key above): the
-- unique mount ID when both have one (statmount records), else the mount
-- ID, mount point, root and device, so a record from a mountinfo table is
-- found again in a statmount table and the other way round.
-- @tparam table a a record
-- @tparam table b a record
-- @treturn boolean
function M.same(a, b)
  if a.unique_id and b.unique_id then return a.unique_id == b.unique_id end
  return a.id == b.id and a.target == b.target and a.root == b.root
    and a.major == b.major and a.minor == b.minor
end

-- the fields whose change `changed` reports
local FIELDS = { "propagation", "shared", "master", "propagate_from",
                 "unbindable", "options", "super_options", "parent_id" }
M.FIELDS = FIELDS

--- Compare two mount tables of one namespace.
-- @tparam table before
-- @tparam table after
-- @treturn table `{added = {records}, removed = {records}, changed =
-- {{before = rec, after = rec, target = path, fields = {names}}}}`
function M.diff(before, after)
  local old = {}
  for _, m in ipairs(before) do old[key(m)] = m end
  local out = { added = {}, removed = {}, changed = {} }
  local seen = {}
  for _, m in ipairs(after) do
    local k = key(m)
    local o = old[k]
    if not o then
      out.added[#out.added + 1] = m
    else
      seen[k] = true
      local fields = {}
      for _, f in ipairs(FIELDS) do
        if o[f] ~= m[f] then fields[#fields + 1] = f end
      end
      if #fields > 0 then
        out.changed[#out.changed + 1] = { before = o, after = m,
                                          target = m.target, fields = fields }
      end
    end
  end
  for _, m in ipairs(before) do
    if not seen[key(m)] then out.removed[#out.removed + 1] = m end
  end
  return out
end

return M
