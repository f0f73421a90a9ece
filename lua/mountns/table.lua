--- Mount tables: arrays of mount records with look-up methods.
-- A mount table is what `mountns.mountinfo`, `mountns.parse_mountinfo` and
-- `ns:mounts()` return: an array of records in mountinfo order, each with
-- the fields listed in `mountns.record` (`record.FIELDS`).
-- @module mountns.table

local argcheck = require "mountns.args"
-- The C core only draws `tostring`'s tree: a table of the model
-- (mountns.model, pure Lua) works where there is no core.so.
local has_core, core = pcall(require, "mountns.core")

local M = {}
local methods = {}
local mt = { __index = methods }

--- Give a plain array of records the mount-table methods.
-- @tparam table records
-- @treturn table the same table
function M.new(records)
  if type(records) ~= "table" then
    argcheck.error("new", 1, "table of records expected, got " .. type(records), 2)
  end
  return setmetatable(records, mt)
end

--- Whether a value is a mount table.
function M.is(t)
  return getmetatable(t) == mt
end

-- The records for which keep(record) is true, in mountinfo order.
local function filter(self, keep)
  local out = {}
  for _, m in ipairs(self) do
    if keep(m) then out[#out + 1] = m end
  end
  return out
end

--- Whether path is dir or below it, both normalised absolute paths (as
-- `normpath` gives them): "/a/b" is under "/a" and "/a", not "/ab".
-- @tparam string path
-- @tparam string dir
-- @treturn boolean
function M.is_under(path, dir)
  return dir == "/" or path == dir or path:sub(1, #dir + 1) == dir .. "/"
end

--- A path normalised lexically, as mount points are written in a table:
-- `//`, `/./` and a trailing `/` collapse, `..` drops the component before
-- it (`/..` is `/`). Symlinks are not followed: `/a/../b` is `/b` even when
-- `/a` is a symlink. The one normaliser of mountns: `find`, the `expect`
-- checks and their diagnostics all go through it.
-- @tparam string path an absolute path
-- @tparam[opt] string fname the function an error names (default "normpath")
-- @tparam[opt] integer argn the argument number an error names (default 1)
-- @tparam[opt] integer level where the error points, as `error` counts it
-- from the caller of normpath (default 1: that caller)
-- @treturn string
-- @raise when path is not a string (`mountns.args.path`: a number is not
-- a path), is relative or holds a NUL byte
function M.normpath(path, fname, argn, level)
  fname, argn, level = fname or "normpath", argn or 1, (level or 1) + 1
  path = argcheck.path(path, fname, argn, level)
  if path:sub(1, 1) ~= "/" then
    argcheck.error(fname, argn, string.format("absolute path expected, got %q", path), level)
  end
  if not (path:find("//", 1, true) or path:find("/%.%.?/") or path:find("/%.%.?$")
          or (#path > 1 and path:sub(-1) == "/")) then
    return path -- already normal: the common case costs two scans
  end
  local parts = {}
  for c in path:gmatch("[^/]+") do
    if c == ".." then
      parts[#parts] = nil
    elseif c ~= "." then
      parts[#parts + 1] = c
    end
  end
  return "/" .. table.concat(parts, "/")
end
local normpath = M.normpath

--- All records at a mount point, bottom first (mountinfo order).
-- @tparam string target an absolute path, normalised lexically (`normpath`)
function methods:find_all(target)
  target = normpath(target, "find_all", 1, 2)
  return filter(self, function(m) return m.target == target end)
end

-- Whether path lookup reaches mount m: nothing is stacked on m or on any
-- of its ancestors, and no sibling mount covers a directory on the way.
local function reachable(self, m)
  local byid, kids = {}, {}
  for _, r in ipairs(self) do
    byid[r.id] = r
    local k = kids[r.parent_id]
    if not k then k = {}; kids[r.parent_id] = k end
    k[#k + 1] = r
  end
  local seen, below = {}, nil
  while not seen[m] do
    seen[m] = true
    for _, c in ipairs(kids[m.id] or {}) do -- something else stacked on m
      if c ~= m and c ~= below and c.target == m.target then return false end
    end
    local p = byid[m.parent_id]
    if not p or p == m then return true end
    for _, c in ipairs(kids[p.id]) do -- a sibling on a directory above m
      if c ~= m and #c.target < #m.target and c.target ~= p.target
         and m.target:sub(1, #c.target + 1) == c.target .. "/" then
        return false
      end
    end
    below, m = m, p
  end
  return true
end

--- The topmost mount at a mount point: the one no other mount at the same
-- target is stacked on (mount(8) shows the same one). A mount hidden by
-- an over-mount of a directory above it is still found (the table lists
-- it at its target); when several stacks end at one target (one hidden,
-- one reached by path lookup), the one path lookup reaches wins, which is
-- what `ns:find` answers with statmount(2).
-- @tparam string target an absolute path, normalised lexically (`normpath`)
-- @treturn table|nil the record
function methods:find(target)
  target = normpath(target, "find", 1, 2)
  local at = filter(self, function(m) return m.target == target end)
  if #at <= 1 then return at[1] end
  local under = {}
  for _, m in ipairs(at) do under[m.parent_id] = true end
  local tops = {}
  for _, m in ipairs(at) do
    if not under[m.id] then tops[#tops + 1] = m end
  end
  if #tops > 1 then
    for i = #tops, 1, -1 do
      if reachable(self, tops[i]) then return tops[i] end
    end
  end
  return tops[#tops] or at[#at]
end

--- The stack at a mount point that path lookup reaches, bottom first: the
-- topmost mount (`find`), the one it is stacked on, and so on down to the
-- first one whose parent is elsewhere (mount --bind A /X; mount B /X
-- gives {A, B}). Empty when nothing is mounted there.
-- @tparam string target an absolute path, normalised lexically (`normpath`)
-- @treturn table the records, bottom to top
function methods:stack(target)
  target = normpath(target, "stack", 1, 2)
  local m, down = self:find(target), {}
  local byid = {}
  for _, r in ipairs(self) do byid[r.id] = r end
  while m and not down[m] and m.target == target do
    down[#down + 1] = m
    down[m] = true
    m = byid[m.parent_id]
  end
  local out = {}
  for i = #down, 1, -1 do out[#out + 1] = down[i] end
  return out
end

--- The record with that mount ID, or nil.
function methods:by_id(id)
  for _, m in ipairs(self) do
    if m.id == id then return m end
  end
  return nil
end

-- A record, or the one mounted at a mount point (a string), or nil (none:
-- what find answered); anything else raises as bad argument #1 to fname at
-- the caller of its caller.
local function record_of(self, m, fname)
  if type(m) == "string" then return normpath(m, fname, 1, 3) and self:find(m) end
  if m ~= nil and type(m) ~= "table" then
    argcheck.error(fname, 1, "record or mount point expected, got " .. type(m), 3)
  end
  return m
end

--- The other mounts of m's peer group in this table (empty if m is not shared).
-- @param m a record, or a mount point
function methods:peers(m)
  m = record_of(self, m, "peers")
  if not (m and m.shared) then return {} end
  return filter(self, function(o) return o.shared == m.shared and o.id ~= m.id end)
end

--- The mounts whose parent is m, in mountinfo order.
-- @param m a record, or a mount point
function methods:children(m)
  m = record_of(self, m, "children")
  if not m then return {} end
  return filter(self, function(o) return o.parent_id == m.id and o.id ~= m.id end)
end

--- The mounts that are slaves of peer group `group` (master:group).
function methods:slaves(group)
  return filter(self, function(o) return o.master == group end)
end

-- Children of each record and the roots, by index, in mountinfo order, as
-- csrc/tree.c links them: a record's parent is the first record with its
-- parent_id; a record without one (or its own parent) is a root. One
-- pass: linear.
local function index_children(self)
  local first, kids, roots = {}, {}, {}
  for i = #self, 1, -1 do first[self[i].id] = i end
  for i = 1, #self do
    local p = first[self[i].parent_id]
    if p and p ~= i then
      local k = kids[p]
      if not k then k = {}; kids[p] = k end
      k[#k + 1] = i
    else
      roots[#roots + 1] = i
    end
  end
  return kids, roots
end

-- Walk the tree depth first, calling visit(m, lead, depth) per mount, where
-- lead is the findmnt-like prefix ("│ └─"), in the order of `tostring`
-- (csrc/tree.c): the roots in mountinfo order, then, so that no record is
-- ever left out, each record no root reaches (a parent cycle, possible
-- only in crafted text) as the start of a walk of its own. An explicit
-- stack: deep trees cannot overflow the C stack.
local function walk(self, visit)
  local kids, roots = index_children(self)
  local seen = {}
  local sm, sl, si, sd, n = {}, {}, {}, {}, 0
  local function from(start)
    n = 1
    sm[1], sl[1], si[1], sd[1] = start, "", "", 0
    while n > 0 do
      local i, lead, indent, depth = sm[n], sl[n], si[n], sd[n]
      n = n - 1
      if not seen[i] then
        seen[i] = true
        visit(self[i], lead, depth)
        local k = kids[i]
        if k then
          local last = #k
          for j = last, 1, -1 do
            local c = k[j]
            if not seen[c] then
              n = n + 1
              sm[n], sd[n] = c, depth + 1
              if j == last then
                sl[n], si[n] = indent .. "└─", indent .. "  "
              else
                sl[n], si[n] = indent .. "├─", indent .. "│ "
              end
            end
          end
        end
      end
    end
  end
  for _, i in ipairs(roots) do from(i) end
  for i = 1, #self do
    if not seen[i] then from(i) end
  end
end
M.walk = walk

--- The mounts at or below a path (mount point `path` or under `path/`),
-- in tree order (as `tostring` lists them), as a mount table: hidden and
-- stacked mounts included, one record each. `t:under("/mnt")` of
-- sharedsubtree.rst's explosion counts 3, 6, 12, 24.
-- @tparam string path an absolute path, normalised lexically (`normpath`)
-- @treturn table a mount table
function methods:under(path)
  path = normpath(path, "under", 1, 2)
  local prefix = path == "/" and "/" or path .. "/"
  local out = {}
  walk(self, function(m)
    if m.target == path or m.target:sub(1, #prefix) == prefix then out[#out + 1] = m end
  end)
  return M.new(out)
end

--- The tree as rows {prefix .. target, record}, in tree order.
local function tree_rows(self)
  local rows = {}
  walk(self, function(m, lead) rows[#rows + 1] = { lead .. m.target, m } end)
  return rows
end
M.tree_rows = tree_rows

--- A findmnt-like tree: TARGET SOURCE FSTYPE ID PARENT PROPAGATION GROUP MASTER.
-- Rendered in C (mountns.core.tree_text): linear, about 0.5 us a mount.
-- Without the core: TARGET SOURCE FSTYPE ID PARENT PROPAGATION, unaligned.
mt.__tostring = has_core and core.tree_text or function(self)
  local out = { "TARGET SOURCE FSTYPE ID PARENT PROPAGATION" }
  walk(self, function(m, lead)
    out[#out + 1] = string.format("%s%s %s %s %s %s %s", lead, m.target, tostring(m.source),
      tostring(m.fstype), tostring(m.id), tostring(m.parent_id), tostring(m.propagation))
  end)
  return table.concat(out, "\n") .. "\n"
end

return M
