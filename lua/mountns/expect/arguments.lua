--- expect.arguments: the checks' arguments: one validation for both polarities and both
-- faces, and the mounts they name (a path, or a record found again).
-- @module mountns.expect.arguments

local mtable = require "mountns.table"
local argcheck = require "mountns.args"
local record = require "mountns.record"
local same_mount = record.same
local escape = require("mountns.core").escape
local D = require "mountns.expect.diagnostic"
local ns_name = D.ns_name

local M = {}

-- ---- the arguments: one validation for both polarities and both faces ------
-- Every check validates all its arguments before it looks at a mount table,
-- so a bad argument raises whatever the namespace holds and whichever way
-- the check is asked: a typo must never make a negated check pass because
-- the thing it names is never there. A check raises its usage errors at its
-- caller (`level` below counts as `error` does, from the caller of the
-- helper); expect's and luassert's forms call it through `run`, which
-- raises them again at their own caller's line.

-- A record from a mount table: it has a mount ID and a mount point.
local function is_record(v)
  return type(v) == "table" and v.id ~= nil and type(v.target) == "string"
end

-- A scenario namespace, on the kernel or on the model (duck-typed: the
-- model's class is not loaded here).
local function is_namespace(v)
  return type(v) == "table" and type(v.mounts) == "function" and type(v.label) == "function"
end

-- A check's namespace argument: what the check reads of it is its mount
-- table (ns:mounts(), ns:find), so anything with those methods will do
-- (a scenario namespace, or a stand-in over a mount table).
local function ns_arg(ns, argn, fname, level)
  if type(ns) ~= "table" or type(ns.mounts) ~= "function" or type(ns.find) ~= "function" then
    argcheck.error(fname, argn, "scenario namespace expected, got "
      .. (ns == nil and "no value" or type(ns)), level + 1)
  end
  return ns
end

-- No argument after the max-th: one would be silently ignored.
local function at_most(max, n, fname, level)
  if n > max then
    argcheck.error(fname, max + 1, string.format("%d argument%s expected, got %d", max,
      max == 1 and "" or "s", n), level + 1)
  end
end

-- A list (keys 1..#v only): another key is a typo that nothing would read.
local function list_arg(v, argn, fname, what, level)
  if type(v) ~= "table" then
    argcheck.error(fname, argn, what .. " expected, got " .. type(v), level + 1)
  end
  local n = #v
  for k in pairs(v) do
    if not (type(k) == "number" and k >= 1 and k <= n and k == math.floor(k)) then
      argcheck.error(fname, argn, string.format("%s expected, got a table with key %s (%s)",
        what, escape(tostring(k)), type(k)), level + 1)
    end
  end
  return v, n
end

-- A mount argument: a path (normalised) or a record (kept).
local function mount_arg(what, argn, fname, level)
  if is_record(what) then return what end
  if type(what) == "table" then
    argcheck.error(fname, argn, "path or mount record expected, got a table without "
      .. "id and target", level + 1)
  end
  local p = mtable.normpath(what, fname, argn, level + 1)
  return p
end

-- How a diagnostic names a mount: "/X", or "/X (mount ID 45)" for a record.
local function describe(what)
  if type(what) == "table" then
    return string.format("%s (mount ID %s)", escape(tostring(what.target)), tostring(what.id))
  end
  return escape(tostring(what))
end

local function where(ns, what)
  return string.format("%s in %s", describe(what), ns_name(ns))
end

-- {ns, path} or {ns, record}, nothing else in the table: ns, what.
local function pair_arg(p, argn, fname, level)
  if type(p) ~= "table" or (type(p[2]) ~= "string" and not is_record(p[2])) then
    argcheck.error(fname, argn, "expected {ns, path} or {ns, record}"
      .. (type(p) == "table" and "" or (", got " .. type(p))), level + 1)
  end
  for k in pairs(p) do
    if k ~= 1 and k ~= 2 then
      argcheck.error(fname, argn, "expected {ns, path} or {ns, record}, got a table with key "
        .. escape(tostring(k)), level + 1)
    end
  end
  ns_arg(p[1], argn, fname, level + 1)
  return p[1], mount_arg(p[2], argn, fname, level + 1)
end

-- The mount `what` names in ns now: a path's topmost mount (as find), or
-- the mount a record came from (found again by mountns.diff's identity),
-- nil when there is none. `from`: a table with propagate_from.
local function lookup(ns, what, from)
  if type(what) == "string" and not from then return ns:find(what) end
  local t = from and ns:mounts { propagate_from = true } or ns:mounts()
  if type(what) == "string" then return t:find(what) end
  for _, m in ipairs(t) do
    if same_mount(m, what) then return m end
  end
  return nil
end

-- Whether {ns, what} items a and b (with the mounts found for them, ra and
-- rb, or nil) name one mount: then a check about two mounts is about one
-- (peers of itself, its own slave), true or false whatever the kernel did.
local function same_item(a, ra, b, rb)
  if not rawequal(a[1], b[1]) then return false end
  if type(a[2]) == "string" and a[2] == b[2] then return true end
  if is_record(a[2]) and is_record(b[2]) and same_mount(a[2], b[2]) then return true end
  return ra ~= nil and rb ~= nil and same_mount(ra, rb)
end

local function twice(fname, argn, first, item, level)
  argcheck.error(fname, argn, string.format("names the same mount as argument #%d (%s): "
    .. "the check would hold or fail whatever the kernel did", first, where(item[1], item[2])),
    level + 1)
end

-- A check that names a mount holds neither way when it is not there: the
-- diagnostic then says which one is missing (the check's third value,
-- invalid, is true).
local function missing_text(missing)
  if #missing == 0 then return "" end
  return " -- but nothing is mounted at " .. table.concat(missing, ", ")
end

-- The records the {ns, path|record} arguments name (n of them, at least
-- `least`), those arguments normalised, and the list of the ones not
-- mounted ("/Typo in sh1 mnt:[N]"). Two arguments naming one mount raise.
local function records(fname, args, n, least, from, level)
  if n < least then
    argcheck.error(fname, n + 1, string.format("at least %d mounts {ns, path} expected, got %d",
      least, n), level + 1)
  end
  local items = {}
  for i = 1, n do items[i] = { pair_arg(args[i], i, fname, level + 1) } end
  local recs, missing = {}, {}
  for i = 1, n do
    recs[i] = lookup(items[i][1], items[i][2], from)
    if not recs[i] then missing[#missing + 1] = where(items[i][1], items[i][2]) end
  end
  for i = 2, n do
    for j = 1, i - 1 do
      if same_item(items[j], recs[j], items[i], recs[i]) then
        twice(fname, i, j, items[j], level + 1)
      end
    end
  end
  return recs, items, missing
end


M.is_record = is_record
M.is_namespace = is_namespace
M.ns_arg = ns_arg
M.at_most = at_most
M.list_arg = list_arg
M.mount_arg = mount_arg
M.describe = describe
M.where = where
M.pair_arg = pair_arg
M.lookup = lookup
M.same_item = same_item
M.twice = twice
M.missing_text = missing_text
M.records = records

return M
