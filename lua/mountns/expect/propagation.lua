--- expect.propagation: the checks of propagation: a mount's propagation, peer groups,
-- masters, `propagate_from`, locked mounts.
-- @module mountns.expect.propagation

local argcheck = require "mountns.args"
local record = require "mountns.record"
local mtable = require "mountns.table"
local escape = require("mountns.core").escape
local D = require "mountns.expect.diagnostic"
local A = require "mountns.expect.arguments"
local diagnostic, with_why = D.diagnostic, D.with_why
local ns_arg, at_most, mount_arg, where = A.ns_arg, A.at_most, A.mount_arg, A.where
local pair_arg, lookup, same_item = A.pair_arg, A.lookup, A.same_item
local missing_text, records = A.missing_text, A.records

local M = {}
local checks = M

-- ---- propagation ------------------------------------------------------------

local propagation_word = {}
for _, w in ipairs(record.PROPAGATIONS) do propagation_word[w] = true end

local function kind_arg(kind, level)
  if type(kind) ~= "string" then
    argcheck.error("propagation", 3, "propagation word expected, got "
      .. (kind == nil and "no value" or type(kind)), level + 1)
  end
  if not propagation_word[kind] then
    argcheck.error("propagation", 3, string.format("'%s' is not a propagation (a mount's "
      .. "propagation is one of: %s)", escape(kind), table.concat(record.PROPAGATIONS, " ")),
      level + 1)
  end
  return kind
end

-- A peer group named by a detail: a number, or {ns, path|record}: the
-- detail checked ({number} or {ns, what}).
local function detail_arg(v, key, level)
  if type(v) == "number" then
    if v < 1 or v ~= math.floor(v) then
      argcheck.error("propagation", 4, "option '" .. key .. "': a peer group ID is an "
        .. "integer > 0, got " .. tostring(v), level + 1)
    end
    return { v }
  end
  if type(v) ~= "table" then
    argcheck.error("propagation", 4, "option '" .. key .. "' must be a peer group ID or "
      .. "{ns, path}, got " .. type(v), level + 1)
  end
  return { pair_arg(v, 4, "propagation", level + 1) }
end

-- The group a checked detail names (or nil) and how to say it.
local function group_of(d)
  if d[2] == nil then return d[1], "peer group " .. d[1] end
  local ns, what = d[1], d[2]
  local m = lookup(ns, what)
  local text = where(ns, what) .. "'s peer group"
  if not m then return nil, text .. " (not mounted)", d, true end
  return m.shared, text .. " (" .. (m.shared and ("shared:" .. m.shared) or "not shared")
    .. ")", d, m.shared == nil
end

function checks.propagation(...)
  local ns, what, kind, details = ...
  at_most(4, select("#", ...), "propagation", 2)
  ns_arg(ns, 1, "propagation", 2)
  what = mount_arg(what, 2, "propagation", 2)
  kind = kind_arg(kind, 2)
  details = argcheck.options(details, "propagation", 4, { "master", "propagate_from" }, 2)
  local checked = {}
  for _, key in ipairs { "master", "propagate_from" } do
    if details[key] ~= nil then
      checked[key] = detail_arg(details[key], key, 2)
      if checked[key][2] ~= nil and same_item({ ns, what }, nil, checked[key], nil) then
        argcheck.error("propagation", 4, "option '" .. key .. "' names the mount itself", 2)
      end
    end
  end
  local m = lookup(ns, what, details.propagate_from ~= nil)
  local got = m and m.propagation or "(not mounted)"
  local ok, invalid, items, said = got == kind, m == nil, { { ns, what } }, {}
  for _, key in ipairs { "master", "propagate_from" } do
    if checked[key] then
      local g, text, item, bad = group_of(checked[key])
      if item then items[#items + 1] = item end
      if bad then invalid = true end
      local have = m and m[key]
      if g == nil or have ~= g then ok = false end
      said[#said + 1] = string.format("%s %s (its %s: %s)", key, text, key, tostring(have))
    end
  end
  local extra = #said > 0 and (" with " .. table.concat(said, ", ")) or ""
  return ok, function(negated)
    return diagnostic(string.format("expected %s %sto be %s%s, it is %s", where(ns, what),
      negated and "not " or "", kind, extra, got), items)
  end, invalid
end

function checks.peers(...)
  local recs, items, missing = records("peers", { ... }, select("#", ...), 2, false, 2)
  local group, ok = nil, true
  for i = 1, #items do
    local m = recs[i]
    if not (m and m.shared) then ok = false
    elseif group == nil then group = m.shared
    elseif group ~= m.shared then ok = false end
  end
  -- why: the first mount that is not there or not in the first's group
  local odd = items[1]
  for i = 2, #items do
    local m = recs[i]
    if not (m and m.shared and recs[1] and m.shared == recs[1].shared) then
      odd = items[i]
      break
    end
  end
  if not recs[1] then odd = items[1] end
  return ok, with_why(function(negated)
    -- each mount as it was found (written only for a failure)
    local descr = {}
    for i, it in ipairs(items) do
      local m = recs[i]
      descr[i] = where(it[1], it[2]) .. " (" .. (m and (m.shared and
        ("shared:" .. m.shared) or m.propagation) or "not mounted") .. ")"
    end
    return diagnostic("expected " .. (negated and "not " or "") .. "one peer group: "
      .. table.concat(descr, ", ") .. missing_text(missing), items)
  end, odd and odd[1], odd and odd[2]), #missing > 0
end

-- The two {ns, path|record} arguments of slave_of and propagate_from.
local function two(fname, from, ...)
  at_most(2, select("#", ...), fname, 3)
  local recs, items, missing = records(fname, { ... }, 2, 2, from, 3)
  return recs, items, missing -- (not a tail call: the levels count two's frame)
end

function checks.slave_of(...)
  local recs, items, missing = two("slave_of", false, ...)
  local s, m = recs[1], recs[2]
  local ok = s ~= nil and m ~= nil and m.shared ~= nil and s.master == m.shared
  local odd = (s == nil or m ~= nil) and items[1] or items[2]
  return ok, with_why(function(negated)
    return diagnostic(string.format("expected %s %sto be a slave of %s's peer group "
      .. "(its master: %s, the group: %s)%s", where(items[1][1], items[1][2]),
      negated and "not " or "", where(items[2][1], items[2][2]),
      s and tostring(s.master) or "not mounted",
      m and tostring(m.shared) or "not mounted", missing_text(missing)), items)
  end, odd[1], odd[2]), #missing > 0
end

function checks.propagate_from(...)
  local recs, items, missing = two("propagate_from", true, ...)
  local s, m = recs[1], recs[2]
  local ok = s ~= nil and m ~= nil and m.shared ~= nil and s.propagate_from == m.shared
  local odd = (s == nil or m ~= nil) and items[1] or items[2]
  return ok, with_why(function(negated)
    return diagnostic(string.format("expected %s %sto receive propagation from %s's peer "
      .. "group (its propagate_from: %s, its master: %s, the group: %s)%s",
      where(items[1][1], items[1][2]), negated and "not " or "",
      where(items[2][1], items[2][2]), s and tostring(s.propagate_from) or "not mounted",
      s and tostring(s.master) or "not mounted",
      m and tostring(m.shared) or "not mounted", missing_text(missing)), items)
  end, odd[1], odd[2]), #missing > 0
end

function checks.locked(...)
  local ns, path = ...
  at_most(2, select("#", ...), "locked", 2)
  ns_arg(ns, 1, "locked", 2)
  path = mtable.normpath(path, "locked", 2, 2)
  local ok, locked = pcall(ns.locked, ns, path)
  -- not a mount at all: neither locked nor not_locked holds (third value)
  return ok and locked, function(negated)
    local why = ok and (locked and "it is" or "it is not") or escape(tostring(locked))
    return diagnostic(string.format("expected %s %sto be locked (%s)", where(ns, path),
      negated and "not " or "", why), { { ns, path } })
  end, not ok
end

return M
