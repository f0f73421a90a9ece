--- expect.diagnostic: the text of a failed check: each namespace's mount table once, the mounts it
-- names marked `>>`, a "why:" line from mountns.explain where a model can
-- answer. Paths and names escaped as `mountns.escape` does: a crafted mount
-- point cannot forge a line of it.
-- @module mountns.expect.diagnostic

local mtable = require "mountns.table"
local record = require "mountns.record"
local escape = require("mountns.core").escape
local lazy = require "mountns.lazy" -- loaded on first use:
local explain = lazy.require "mountns.explain"

local M = {}

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

local function pad(s, w)
  return s .. string.rep(" ", w - width(s))
end

-- The columns a table needs so that no two of its rows look alike: SOURCE
-- when a mount point holds a stack (the rows differ by their source),
-- ROOT when a record's root is not "/" (a bind of a subdirectory), and
-- PROPAGATE_FROM when a record has one.
local function extra_columns(t)
  local at, source, root, from = {}, false, false, false
  for _, m in ipairs(t) do
    if at[m.target] then source = true end
    at[m.target] = true
    if m.root ~= nil and m.root ~= "/" then root = true end
    if m.propagate_from ~= nil then from = true end
  end
  return source, root, from
end

-- One namespace's table as a findmnt-like tree, offending lines marked
-- ">>" (marks: mount points and mount IDs).
local function render(ns, t, marks)
  local rows, w = mtable.tree_rows(t), #"TARGET"
  local show_source, show_root, show_from = extra_columns(t)
  local ws, wr, wg = #"SOURCE", #"ROOT", #"GROUPS"
  for _, r in ipairs(rows) do
    -- the tree's lead, then the mount point escaped
    local m = r[2]
    r[1] = r[1]:sub(1, #r[1] - #m.target) .. escape(m.target)
    r[3] = escape(tostring(m.source or ""))
    r[4] = escape(tostring(m.root or ""))
    r[5] = record.groups(m)
    w = math.max(w, width(r[1]))
    ws, wr, wg = math.max(ws, width(r[3])), math.max(wr, width(r[4])), math.max(wg, #r[5])
  end
  local head = "     " .. pad("TARGET", w)
    .. (show_source and (" " .. pad("SOURCE", ws)) or "")
    .. (show_root and (" " .. pad("ROOT", wr)) or "")
    .. "     ID PARENT PROPAGATION  " .. (show_from and (pad("GROUPS", wg) .. " PROPAGATE_FROM")
    or "GROUPS")
  local out = { "  " .. ns_name(ns) .. ":", head }
  for _, r in ipairs(rows) do
    local m = r[2]
    local line = string.format("%s%s%s%s %5d %6d %-12s %s%s",
      (marks[m.target] or marks[m.id]) and "  >> " or "     ", pad(r[1], w),
      show_source and (" " .. pad(r[3], ws)) or "", show_root and (" " .. pad(r[4], wr)) or "",
      m.id, m.parent_id, escape(tostring(m.propagation)),
      show_from and pad(r[5], wg) or r[5],
      show_from and m.propagate_from and (" " .. m.propagate_from) or "")
    out[#out + 1] = (line:gsub(" +$", ""))
  end
  return table.concat(out, "\n")
end

-- A namespace's table for a diagnostic: with propagate_from where the
-- namespace can give it.
local function table_for(ns)
  local ok, t = pcall(ns.mounts, ns, { propagate_from = true })
  if not ok or not t then ok, t = pcall(ns.mounts, ns) end
  return ok and t or nil
end

-- The diagnostic: a headline, then each namespace's table once, marked.
-- items: list of {ns, path or record or ""} ("" marks nothing: a namespace
-- shown whole)
local function diagnostic(headline, items)
  local order, marks, tables = {}, {}, {}
  for _, it in ipairs(items) do
    local ns = it[1]
    if not marks[ns] then
      order[#order + 1] = ns
      marks[ns] = {}
      tables[ns] = table_for(ns)
    end
    local what = it[2]
    if type(what) == "table" and what.id ~= nil then
      marks[ns][what.id] = true -- a record: that mount only
    else
      -- marked as find matches it
      if type(what) == "string" and what:sub(1, 1) == "/" then what = mtable.normpath(what) end
      if what ~= nil then marks[ns][what] = true end
    end
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

-- The diagnostic with a "why: ..." line after its headline: the first
-- sentence of mountns.explain for the mount `what` names in ns, when a
-- model can answer (a model namespace, or a kernel scenario's namespace
-- from its recorded steps). explain.why never raises; should anything
-- here fail all the same, the diagnostic is returned as it was: the
-- failure it reports must never be hidden by its explanation.
local function with_why(diag, ns, what)
  return function(...)
    local text = diag(...)
    local ok, line = pcall(function()
      local path = type(what) == "table" and what.target or what
      if type(path) ~= "string" or path:sub(1, 1) ~= "/" then return nil end
      return explain.why(ns, path)
    end)
    if not ok or type(line) ~= "string" then return text end
    local head, rest = text:match("^([^\n]*)(.*)$")
    return head .. "\n  why: " .. line .. rest
  end
end


M.ns_name, M.with_why = ns_name, with_why

return M
