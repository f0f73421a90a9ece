--- Mount tables: arrays of mount records with look-up methods.
-- A mount table is what `mountns.mountinfo`, `mountns.parse_mountinfo` and
-- `ns:mounts()` return: an array of records in mountinfo order, each with
-- `id`, `parent_id`, `major`, `minor`, `root`, `target`, `options`, `fstype`,
-- `source`, `super_options`, `shared`, `master`, `propagate_from`,
-- `unbindable` and `propagation`.
-- @module mountns.table

local M = {}
local methods = {}
local mt = { __index = methods }

--- Give a plain array of records the mount-table methods.
-- @tparam table records
-- @treturn table the same table
function M.new(records)
  return setmetatable(records, mt)
end

--- Whether a value is a mount table.
function M.is(t)
  return getmetatable(t) == mt
end

--- The topmost mount at a mount point: the one no other mount at the same
-- target is stacked on (mount(8) shows the same one).
-- @tparam string target
-- @treturn table|nil the record
function methods:find(target)
  local at = {}
  for _, m in ipairs(self) do
    if m.target == target then at[#at + 1] = m end
  end
  if #at <= 1 then return at[1] end
  local under = {}
  for _, m in ipairs(at) do under[m.parent_id] = true end
  for i = #at, 1, -1 do
    if not under[at[i].id] then return at[i] end
  end
  return at[#at]
end

--- The record with that mount ID, or nil.
function methods:by_id(id)
  for _, m in ipairs(self) do
    if m.id == id then return m end
  end
  return nil
end

--- All records at a mount point, bottom first (mountinfo order).
function methods:find_all(target)
  local at = {}
  for _, m in ipairs(self) do
    if m.target == target then at[#at + 1] = m end
  end
  return at
end

local function record_of(self, m)
  if type(m) == "string" then return self:find(m) end
  return m
end

--- The other mounts of m's peer group in this table (empty if m is not shared).
-- @param m a record, or a mount point
function methods:peers(m)
  m = record_of(self, m)
  local out = {}
  if not (m and m.shared) then return out end
  for _, o in ipairs(self) do
    if o.shared == m.shared and o.id ~= m.id then out[#out + 1] = o end
  end
  return out
end

--- The mounts whose parent is m, in mountinfo order.
-- @param m a record, or a mount point
function methods:children(m)
  m = record_of(self, m)
  local out = {}
  if not m then return out end
  for _, o in ipairs(self) do
    if o.parent_id == m.id and o.id ~= m.id then out[#out + 1] = o end
  end
  return out
end

--- The mounts that are slaves of peer group `group` (master:group).
function methods:slaves(group)
  local out = {}
  for _, o in ipairs(self) do
    if o.master == group then out[#out + 1] = o end
  end
  return out
end

-- The tree as rows {prefix .. target, record}: roots are records whose
-- parent is not in the table. One pass to index children: linear.
local function tree_rows(self)
  local kids, ids = {}, {}
  for _, m in ipairs(self) do ids[m.id] = true end
  local roots = {}
  for _, m in ipairs(self) do
    if ids[m.parent_id] and m.parent_id ~= m.id then
      local k = kids[m.parent_id]
      if not k then k = {}; kids[m.parent_id] = k end
      k[#k + 1] = m
    else
      roots[#roots + 1] = m
    end
  end
  local rows = {}
  -- iterative depth-first walk: deep trees cannot overflow the C stack
  local stack = {}
  for i = #roots, 1, -1 do stack[#stack + 1] = { roots[i], "", "" } end
  while #stack > 0 do
    local top = table.remove(stack)
    local m, lead, indent = top[1], top[2], top[3]
    rows[#rows + 1] = { lead .. m.target, m }
    local k = kids[m.id]
    if k then
      for i = #k, 1, -1 do
        local last = i == #k
        stack[#stack + 1] = { k[i], indent .. (last and "└─" or "├─"),
                              indent .. (last and "  " or "│ ") }
      end
    end
  end
  return rows
end
M.tree_rows = tree_rows

-- display width of a UTF-8 string (the tree glyphs are one column each)
local function width(s)
  local _, n = s:gsub("[^\128-\191]", "")
  return n
end

local function pad(s, w)
  return s .. string.rep(" ", w - width(s))
end

--- A findmnt-like tree: TARGET SOURCE FSTYPE ID PARENT PROPAGATION GROUP MASTER.
function mt:__tostring()
  local rows = tree_rows(self)
  local w = { width("TARGET"), #"SOURCE", #"FSTYPE" }
  for _, r in ipairs(rows) do
    local tw = width(r[1])
    if tw > w[1] then w[1] = tw end
    if #r[2].source > w[2] then w[2] = #r[2].source end
    if #r[2].fstype > w[3] then w[3] = #r[2].fstype end
  end
  local out = { pad("TARGET", w[1]) .. " " .. pad("SOURCE", w[2]) .. " "
    .. pad("FSTYPE", w[3]) .. "     ID PARENT PROPAGATION  GROUP MASTER" }
  for _, r in ipairs(rows) do
    local m = r[2]
    out[#out + 1] = string.format("%s %s %s %6d %6d %-12s %6s %6s",
      pad(r[1], w[1]), pad(m.source, w[2]), pad(m.fstype, w[3]), m.id,
      m.parent_id, m.propagation, m.shared or "", m.master or "")
  end
  return table.concat(out, "\n") .. "\n"
end

return M
