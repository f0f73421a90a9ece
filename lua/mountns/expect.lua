--- expect: assertions on what the kernel did, with diagnostics.
-- Each assertion raises an error whose text shows the mount tables of
-- every namespace involved (paths, IDs, propagation, peer group, master)
-- with the offending lines marked `>>`. Each also has a `check` form in
-- `expect.checks` returning `ok, diagnostic` (used by mountns.luassert).
-- Paths and names in a diagnostic are escaped as `mountns.escape` does: a
-- crafted mount point cannot forge a line of it.
-- @module mountns.expect

local mtable = require "mountns.table"
local escape = require("mountns.core").escape

local M = {}
local checks = {}
M.checks = checks

local function ns_name(ns)
  if type(ns) == "table" and ns.label and ns.id then
    local ok, s = pcall(tostring, ns)
    if ok then return escape(s) end
  end
  return escape(tostring(ns))
end

-- display width: the tree glyphs are one column each
local function width(str)
  local _, n = str:gsub("[^\128-\191]", "")
  return n
end

-- One namespace's table as a findmnt-like tree, offending lines marked ">>".
local function render(ns, t, marks)
  local rows, w = mtable.tree_rows(t), #"TARGET"
  for _, r in ipairs(rows) do
    -- the tree's lead, then the mount point escaped
    local target = r[2].target
    r[1] = r[1]:sub(1, #r[1] - #target) .. escape(target)
    w = math.max(w, width(r[1]))
  end
  local out = { "  " .. ns_name(ns) .. ":",
    "     " .. "TARGET" .. string.rep(" ", w - 6) .. "    ID PARENT PROPAGATION  GROUPS" }
  for _, r in ipairs(rows) do
    local m = r[2]
    out[#out + 1] = string.format("%s%s%s %5d %6d %-12s %s%s",
      marks[m.target] and "  >> " or "     ", r[1], string.rep(" ", w - width(r[1])),
      m.id, m.parent_id, escape(tostring(m.propagation)),
      m.shared and ("shared:" .. m.shared .. " ") or "",
      m.master and ("master:" .. m.master) or "")
  end
  return table.concat(out, "\n")
end

-- The diagnostic: a headline, then each namespace's table once, marked.
-- items: list of {ns, path}
local function diagnostic(headline, items)
  local order, marks, tables = {}, {}, {}
  for _, it in ipairs(items) do
    local ns = it[1]
    if not marks[ns] then
      order[#order + 1] = ns
      marks[ns] = {}
      local ok, t = pcall(ns.mounts, ns)
      tables[ns] = ok and t or nil
    end
    -- marked as find matches it ("" marks nothing: a namespace shown whole)
    local path = it[2]
    if type(path) == "string" and path:sub(1, 1) == "/" then path = mtable.normpath(path) end
    marks[ns][path] = true
  end
  local out = { headline }
  for _, ns in ipairs(order) do
    if tables[ns] then
      out[#out + 1] = render(ns, tables[ns], marks[ns])
    else
      out[#out + 1] = "  " .. ns_name(ns) .. ": (mount table unavailable)"
    end
  end
  return table.concat(out, "\n")
end
M.diagnostic = diagnostic

local function where(ns, path)
  return string.format("%s in %s", escape(tostring(path)), ns_name(ns))
end

-- A check's path, normalised lexically (mtable.normpath); a bad one raises
-- at the user's line (norm, check, assertion wrapper, user).
local function norm(path, argn, fname)
  local p = mtable.normpath(path, fname, argn, 4) -- (not a tail call: levels)
  return p
end

-- (check_pair, records, check, assertion wrapper, user)
local function check_pair(p, argn, fname)
  if type(p) ~= "table" or type(p[1]) ~= "table" or type(p[2]) ~= "string" then
    error(string.format("bad argument #%d to '%s' (expected {ns, path})", argn, fname), 5)
  end
  return p[1], mtable.normpath(p[2], fname, argn, 5)
end

-- A check that names a mount holds neither way when it is not there: the
-- diagnostic then says which one is missing (the check's third value,
-- invalid, is true).
local function missing_text(missing)
  if #missing == 0 then return "" end
  return " -- but nothing is mounted at " .. table.concat(missing, ", ")
end

function checks.mounted(ns, path)
  path = norm(path, 2, "mounted")
  local m = ns:find(path)
  return m ~= nil, function(negated)
    return diagnostic(negated and ("expected no mount at " .. where(ns, path))
                      or ("expected a mount at " .. where(ns, path)), { { ns, path } })
  end
end

function checks.propagation(ns, path, kind)
  path = norm(path, 2, "propagation")
  local m = ns:find(path)
  local got = m and m.propagation or "(not mounted)"
  return got == kind, function(negated)
    return diagnostic(string.format("expected %s %sto be %s, it is %s", where(ns, path),
      negated and "not " or "", kind, got), { { ns, path } })
  end, m == nil
end

-- The records the {ns, path} arguments name, those arguments normalised,
-- and the list of the ones not mounted ("/Typo in sh1 mnt:[N]").
local function records(fname, args)
  local recs, items, missing = {}, {}, {}
  for i, p in ipairs(args) do
    local ns, path = check_pair(p, i, fname)
    recs[i], items[i] = ns:find(path), { ns, path }
    if not recs[i] then missing[#missing + 1] = where(ns, path) end
  end
  return recs, items, missing
end

function checks.peers(...)
  local recs, items, missing = records("peers", { ... })
  local group, ok, descr = nil, #items >= 2, {}
  for i, it in ipairs(items) do
    local m = recs[i]
    descr[#descr + 1] = where(it[1], it[2]) .. " (" .. (m and (m.shared and
      ("shared:" .. m.shared) or m.propagation) or "not mounted") .. ")"
    if not (m and m.shared) then ok = false
    elseif group == nil then group = m.shared
    elseif group ~= m.shared then ok = false end
  end
  return ok, function(negated)
    return diagnostic("expected " .. (negated and "not " or "") .. "one peer group: "
      .. table.concat(descr, ", ") .. missing_text(missing), items)
  end, #missing > 0
end

function checks.slave_of(a, b)
  local recs, items, missing = records("slave_of", { a, b })
  local s, m = recs[1], recs[2]
  local ok = s ~= nil and m ~= nil and m.shared ~= nil and s.master == m.shared
  return ok, function(negated)
    return diagnostic(string.format("expected %s %sto be a slave of %s's peer group "
      .. "(its master: %s, the group: %s)%s", where(items[1][1], items[1][2]),
      negated and "not " or "", where(items[2][1], items[2][2]),
      s and tostring(s.master) or "not mounted",
      m and tostring(m.shared) or "not mounted", missing_text(missing)), items)
  end, #missing > 0
end

function checks.locked(ns, path)
  path = norm(path, 2, "locked")
  local ok, locked = pcall(ns.locked, ns, path)
  -- not a mount at all: neither locked nor not_locked holds (third value)
  return ok and locked, function(negated)
    local why = ok and (locked and "it is" or "it is not") or escape(tostring(locked))
    return diagnostic(string.format("expected %s %sto be locked (%s)", where(ns, path),
      negated and "not " or "", why), { { ns, path } })
  end, not ok
end

local function assertion(check, negate)
  return function(...)
    local ok, diag, invalid = check(...)
    if negate then ok = not ok end
    if invalid then ok = false end
    if not ok then error(diag(negate), 2) end
    return true
  end
end

--- expect.mounted(ns, path): a mount exists at path in ns.
M.mounted = assertion(checks.mounted)
--- expect.not_mounted(ns, path)
M.not_mounted = assertion(checks.mounted, true)
--- expect.propagation(ns, path, kind): "shared", "slave", "shared,slave",
-- "private" or "unbindable".
M.propagation = assertion(checks.propagation)
--- expect.peers({ns, path}, {ns, path}, ...): all in one peer group.
M.peers = assertion(checks.peers)
--- expect.not_peers(a, b): a and b are not in one peer group.
M.not_peers = assertion(checks.peers, true)
--- expect.slave_of({ns, path}, {ns, path}): the first's master is the
-- second's peer group.
M.slave_of = assertion(checks.slave_of)

--- expect.locked(ns, path): the mount is locked in ns (it came from a more
-- privileged namespace: it cannot be unmounted or moved apart from its parent).
M.locked = assertion(checks.locked)
--- expect.not_locked(ns, path)
M.not_locked = assertion(checks.locked, true)

--- expect.golden(expected_text, ns1, ns2, ...): the namespaces' tables,
-- normalised together and formatted in the seed article's style (a blank
-- line between namespaces), equal the text; a mismatch shows a line diff.
-- See mountns.format.golden.
function M.golden(expected, ...)
  return require("mountns.format").golden(expected, ...)
end

--- expect.fails(ename, fn, ...): fn raises an error whose message names
-- that errno ("(EINVAL)"), or returns nil and such a message as the core
-- calls do. Returns the message.
function M.fails(ename, fn, ...)
  if type(ename) ~= "string" or type(fn) ~= "function" then
    error("usage: expect.fails(\"ENAME\", fn, ...)", 2)
  end
  local ok, err, msg2 = pcall(fn, ...)
  -- a core call returns its failure (nil, message, errno): that counts too
  if ok and err == nil and type(msg2) == "string" then
    ok, err = false, msg2
  end
  if ok then
    error(string.format("expected an error naming %s, but the call succeeded", ename), 2)
  end
  local msg = tostring(err)
  if not msg:find("(" .. ename .. ")", 1, true) then
    error(string.format("expected an error naming %s, got: %s", ename, msg), 2)
  end
  return msg
end

--- expect.propagates(event_fn, {ns, path [, kind]}, ...): running event_fn
-- produces exactly these mount events (kind "attach" by default, or
-- "detach", "change") in the namespaces named, and no other event there.
-- `{ns}` alone watches a namespace that must see nothing; a table without
-- [1] holds options (`fallback = true`: poll and diff instead of fanotify).
-- On mismatch: expected, received, missing and unexpected events, then the
-- tables. Returns the received events. See mountns.watch.
function checks.propagates(event_fn, ...)
  local ok, diag = require("mountns.watch").check_propagates(event_fn, ...)
  return ok, diag
end

function M.propagates(event_fn, ...)
  local ok, diag, received = require("mountns.watch").check_propagates(event_fn, ...)
  if not ok then error(diag(), 2) end
  return received
end

return M
