--- diff: what one event did to the mount table of one namespace.
-- @module mountns.diff

local record = require "mountns.record"
local argcheck = require "mountns.args"

local M = {}

local key = record.key

--- Whether two records describe the same mount (`mountns.record.same`).
-- @function same
M.same = record.same

--- Compare two lists of records by mount identity (`mountns.record.key`),
-- the fields of `fields` telling whether a mount changed: the matching of
-- `diff` and of the events of `mountns.watch`.
-- @tparam table before records
-- @tparam table after records
-- @tparam table fields names of the fields compared
-- @treturn table as `diff`
function M.match(before, after, fields)
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
      local differ = {}
      for _, f in ipairs(fields) do
        if o[f] ~= m[f] then differ[#differ + 1] = f end
      end
      if #differ > 0 then
        out.changed[#out.changed + 1] = { before = o, after = m,
                                          target = m.target, fields = differ }
      end
    end
  end
  for _, m in ipairs(before) do
    if not seen[key(m)] then out.removed[#out.removed + 1] = m end
  end
  return out
end

--- Compare two mount tables of one namespace.
-- @tparam table before
-- @tparam table after
-- @treturn table `{added = {records}, removed = {records}, changed =
-- {{before = rec, after = rec, target = path, fields = {names}}}}`: a
-- record is changed when one of `mountns.record.CHANGES` differs
function M.diff(before, after)
  for argn = 1, 2 do
    local t = after
    if argn == 1 then t = before end
    -- a namespace is a table too, whose list part is empty: no difference
    if type(t) ~= "table" or type(t.mounts) == "function" then
      argcheck.error("diff", argn, "mount table expected, got " .. (type(t) == "table"
        and "a namespace (its table is ns:mounts())" or type(t)), 2)
    end
  end
  return M.match(before, after, record.CHANGES)
end

return M
