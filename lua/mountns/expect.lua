--- expect: assertions on what the kernel did, with diagnostics.
-- Each assertion raises an error whose text shows the mount tables of
-- every namespace involved (paths, IDs, propagation, peer group, master)
-- with the offending lines marked `>>`. Each also has a `check` form in
-- `expect.checks` returning `ok, diagnostic, invalid` (used by
-- mountns.luassert; invalid: it holds neither way). A bad argument raises a
-- usage error at the caller's line in every form and both polarities.
-- Paths and names in a diagnostic are escaped as `mountns.escape` does: a
-- crafted mount point cannot forge a line of it.
--
-- A mount is named by a path (the topmost mount there, as `find` answers)
-- or by a record from `ns:mounts()`, `find_all`, `t:stack` or `t:under`
-- (that very mount, also one below the top of a stack): `{ns, "/X"}` and
-- `{ns, record}` are both accepted wherever a mount is named.
-- @module mountns.expect

local mtable = require "mountns.table"
local argcheck = require "mountns.args"
local record = require "mountns.record"
local same_mount = record.same
local escape = require("mountns.core").escape
local errno = require("mountns.core").errno
local format = require "mountns.format"
local lazy = require "mountns.lazy" -- loaded on first use:
local namespace = lazy.require "mountns.namespace"
local watch = lazy.require "mountns.watch"
local model = lazy.require "mountns.model"
local explain = lazy.require "mountns.explain"

local M = {}
local checks = {}
M.checks = checks

local unpack = table.unpack or unpack -- luacheck: ignore

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

-- ---- mounted, with the fields that say which mount --------------------------

local MOUNTED_FIELDS = { "source", "fstype", "root", "options", "parent" }

-- The option words `options` may name. A typo (nosiud) must raise, not
-- be "lacking" for ever: so each word is one the kernel writes in
-- mountinfo, one that says such a word is absent, or a filesystem's own.
--   SHOWN: the words fs/proc_namespace.c writes (show_mnt_opts' per-mount
--     flags, idmapped, and show_sb_opts' superblock flags), ro/rw first.
--   ABSENT: mount(8)'s words for the opposite flag, which mountinfo never
--     writes: "suid" holds where "nosuid" is absent (strictatime: neither
--     relatime nor noatime).
--   A filesystem's own option is KEY=VALUE (any key: each filesystem has
--     its own) or one of FS_WORDS, the bare words the kernel writes for the
--     filesystems scenarios mount (tmpfs, cgroup2, overlay; seclabel from
--     SELinux); another filesystem's bare word raises: read m.super_options.
-- Every SHOWN and ABSENT word but idmapped is a flag of the core's mount
-- (csrc/mount.c, mount_flags): spec 29 checks it.
local SHOWN = { "ro", "rw", "nosuid", "nodev", "noexec", "noatime", "nodiratime", "relatime",
                "nosymfollow", "idmapped", "sync", "dirsync", "mand", "lazytime" }
local ABSENT = { suid = { "nosuid" }, dev = { "nodev" }, exec = { "noexec" },
                 atime = { "noatime" }, diratime = { "nodiratime" },
                 norelatime = { "relatime" }, strictatime = { "relatime", "noatime" },
                 symfollow = { "nosymfollow" }, async = { "sync" }, nomand = { "mand" },
                 nolazytime = { "lazytime" } }
local FS_WORDS = { "seclabel", "inode64", "inode32", "noswap", "quota", "usrquota",
                   "grpquota", "nsdelegate", "favordynmods", "memory_localevents",
                   "memory_recursiveprot", "memory_hugetlb_accounting", "pids_localevents",
                   "userxattr", "volatile" }
--- The words `options` of expect.mounted accepts: `shown`, `absent` (a word
-- -> the words whose absence it means) and `filesystem` (besides KEY=VALUE).
M.OPTION_WORDS = { shown = SHOWN, absent = ABSENT, filesystem = FS_WORDS }
local known_word = {}
for _, w in ipairs(SHOWN) do known_word[w] = true end
for w in pairs(ABSENT) do known_word[w] = true end
for _, w in ipairs(FS_WORDS) do known_word[w] = true end

local function option_word(o, fname, argn, level)
  if known_word[o] or o:find("^[^=]+=") then return o end
  local absent = {}
  for w in pairs(ABSENT) do absent[#absent + 1] = w end
  table.sort(absent)
  argcheck.error(fname, argn, string.format("option 'options': unknown mount option '%s' "
    .. "(mountinfo's: %s; their opposites: %s; a filesystem's own: KEY=VALUE or %s)",
    escape(o), table.concat(SHOWN, ", "), table.concat(absent, ", "),
    table.concat(FS_WORDS, ", ")), level + 1)
end

-- The option words of a comma string or a list, each checked.
local function option_list(v, fname, argn, level)
  local out = {}
  if type(v) == "string" then
    -- (split by hand: gmatch of "[^,]*" finds other empty words on 5.1)
    for o in (v .. ","):gmatch("([^,]*),") do
      if o == "" then
        argcheck.error(fname, argn, "option 'options': empty word in '" .. escape(v) .. "'",
          level + 1)
      end
      out[#out + 1] = option_word(o, fname, argn, level + 1)
    end
  elseif type(v) == "table" then
    local _, n = list_arg(v, argn, fname, "option 'options': a list of words", level + 1)
    for i = 1, n do
      if type(v[i]) ~= "string" then
        argcheck.error(fname, argn, "option 'options': entry " .. i .. " is not a string",
          level + 1)
      end
      out[#out + 1] = option_word(v[i], fname, argn, level + 1)
    end
  else
    argcheck.error(fname, argn, "option 'options' must be a comma string or a list, got "
      .. type(v), level + 1)
  end
  return out
end

-- The fields of expect.mounted checked: strings, option words and the
-- parent (a path or record) normalised.
local function mounted_fields(want, fname, level)
  want = argcheck.options(want, fname, 3, MOUNTED_FIELDS, level + 1)
  local out = {}
  for _, k in ipairs { "source", "fstype", "root" } do
    local v = want[k]
    if v ~= nil and type(v) ~= "string" then
      argcheck.error(fname, 3, "option '" .. k .. "' must be a string, got " .. type(v),
        level + 1)
    end
    out[k] = v
  end
  if want.options ~= nil then out.options = option_list(want.options, fname, 3, level + 1) end
  if want.parent ~= nil then out.parent = mount_arg(want.parent, 3, fname, level + 1) end
  return out
end

-- Whether the record has option o: "ro"/"rw" and the other per-mount
-- flags are read from the mount's options; the rest from either list (a
-- tmpfs' "size=" is a superblock option); an ABSENT word holds when none
-- of its opposites is there.
local function has_option(m, o)
  local function inlist(list, x)
    for y in tostring(list or ""):gmatch("[^,]+") do
      if y == x then return true end
    end
    return false
  end
  if ABSENT[o] then
    for _, x in ipairs(ABSENT[o]) do
      if inlist(m.options, x) or inlist(m.super_options, x) then return false end
    end
    return true
  end
  if o == "ro" or o == "rw" then return inlist(m.options, o) end
  return inlist(m.options, o) or inlist(m.super_options, o)
end

-- The fields of want (checked) that m does not match, as "source is b, not a".
local function mismatches(m, want, parent)
  local bad = {}
  for _, k in ipairs { "source", "fstype", "root" } do
    local v = want[k]
    if v ~= nil and m[k] ~= v then
      bad[#bad + 1] = string.format("its %s is %s, not %s", k, escape(tostring(m[k])), escape(v))
    end
  end
  if want.options then
    local lacking = {}
    for _, o in ipairs(want.options) do
      if not has_option(m, o) then lacking[#lacking + 1] = escape(o) end
    end
    if #lacking > 0 then
      bad[#bad + 1] = string.format("its options %s (%s) lack %s", escape(tostring(m.options)),
        escape(tostring(m.super_options)), table.concat(lacking, ","))
    end
  end
  if want.parent ~= nil and parent and parent.id ~= m.parent_id then
    bad[#bad + 1] = string.format("its parent is mount %s, not %s (mount %s)",
      tostring(m.parent_id), describe(want.parent), tostring(parent.id))
  end
  return bad
end

local function fields_text(want)
  local out = {}
  for _, k in ipairs(MOUNTED_FIELDS) do
    local v = want[k]
    if v ~= nil then
      if type(v) == "table" and not is_record(v) then v = table.concat(v, ",") end
      out[#out + 1] = k .. "=" .. describe(v)
    end
  end
  return table.concat(out, " ")
end

function checks.mounted(...)
  local ns, what, want = ...
  at_most(3, select("#", ...), "mounted", 2)
  ns_arg(ns, 1, "mounted", 2)
  what = mount_arg(what, 2, "mounted", 2)
  want = mounted_fields(want, "mounted", 2)
  if want.parent ~= nil and same_item({ ns, what }, nil, { ns, want.parent }, nil) then
    argcheck.error("mounted", 3, "option 'parent' names the mount itself", 2)
  end
  local m = lookup(ns, what)
  -- A parent that is not a mount in ns: the mount there can neither have
  -- nor lack that parent, so the check holds neither way (invalid, as a
  -- missing mount is for the other checks): not_mounted must not pass
  -- because of a typo in the parent (even with nothing at path).
  local parent, missing = nil, {}
  if want.parent ~= nil then
    parent = lookup(ns, want.parent)
    if not parent then missing[1] = where(ns, want.parent) .. " (the parent)" end
  end
  if m and parent and same_mount(m, parent) then
    argcheck.error("mounted", 3, "option 'parent' names the mount itself", 2)
  end
  local bad = m and mismatches(m, want, parent) or {}
  local with = next(want) and (" with " .. fields_text(want)) or ""
  local items = { { ns, what } }
  if want.parent ~= nil then items[2] = { ns, want.parent } end
  return m ~= nil and #bad == 0 and #missing == 0, with_why(function(negated)
    local head = (negated and "expected no mount at " or "expected a mount at ")
      .. where(ns, what) .. with
    if not negated and m and #bad > 0 then head = head .. ": " .. table.concat(bad, "; ") end
    return diagnostic(head .. missing_text(missing), items)
  end, ns, what), #missing > 0
end

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

-- ---- stacks, order, counts ---------------------------------------------------

local function sources_text(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = escape(tostring(v)) end
  return #out > 0 and table.concat(out, ", ") or "(nothing)"
end

function checks.stack(...)
  local ns, path, sources = ...
  at_most(3, select("#", ...), "stack", 2)
  ns_arg(ns, 1, "stack", 2)
  path = mtable.normpath(path, "stack", 2, 2)
  list_arg(sources, 3, "stack", "list of sources", 2)
  for i, s in ipairs(sources) do
    if type(s) ~= "string" then
      argcheck.error("stack", 3, "source #" .. i .. " is not a string", 2)
    end
  end
  local got = {}
  for i, m in ipairs(ns:mounts():stack(path)) do got[i] = m.source or "none" end
  local ok = #got == #sources
  for i = 1, #sources do
    if got[i] ~= sources[i] then ok = false end
  end
  return ok, function(negated)
    return diagnostic(string.format("expected the stack at %s %sto be, bottom to top: %s; "
      .. "it is: %s", where(ns, path), negated and "not " or "", sources_text(sources),
      sources_text(got)), { { ns, path } })
  end
end

local function ordinal(n)
  local s = (n % 100 >= 11 and n % 100 <= 13) and "th"
    or ({ "st", "nd", "rd" })[n % 10] or "th"
  return n .. s
end

function checks.order(...)
  local ns, list = ...
  at_most(2, select("#", ...), "order", 2)
  ns_arg(ns, 1, "order", 2)
  local _, n = list_arg(list, 2, "order", "a list of paths or records", 2)
  if n < 2 then
    argcheck.error("order", 2, "a list of at least two paths or records expected, got "
      .. n, 2)
  end
  local names = {}
  for i = 1, n do names[i] = mount_arg(list[i], 2, "order", 2) end
  local t = ns:mounts()
  local pos, ok, missing, items = {}, true, {}, {}
  for i, what in ipairs(names) do
    local m = type(what) == "string" and t:find(what) or nil
    for k, r in ipairs(t) do
      if (m and r == m) or (type(what) == "table" and same_mount(r, what)) then
        pos[i] = k
        break
      end
    end
    items[i] = { ns, what }
    for j = 1, i - 1 do
      if same_item(items[j], pos[j] and t[pos[j]], items[i], pos[i] and t[pos[i]]) then
        argcheck.error("order", 2, string.format("entries #%d and #%d name the same mount "
          .. "(%s): the check would hold or fail whatever the kernel did", j, i,
          where(ns, names[j])), 2)
      end
    end
    if not pos[i] then
      ok = false
      missing[#missing + 1] = where(ns, what)
    elseif i > 1 and pos[i - 1] and pos[i] <= pos[i - 1] then
      ok = false
    end
  end
  return ok, function(negated)
    local said, list_text = {}, {}
    for i, what in ipairs(names) do
      list_text[i] = describe(what)
      said[i] = describe(what) .. " (" .. (pos[i] and ordinal(pos[i]) or "absent") .. ")"
    end
    return diagnostic(string.format("expected %s in %s %sin this order (mountinfo order); "
      .. "the table lists them %s%s", table.concat(list_text, ", "), ns_name(ns),
      negated and "not " or "", table.concat(said, ", "), missing_text(missing)), items)
  end, #missing > 0
end

function checks.count(...)
  local ns, path, n = ...
  at_most(3, select("#", ...), "count", 2)
  ns_arg(ns, 1, "count", 2)
  path = mtable.normpath(path, "count", 2, 2)
  if type(n) ~= "number" or n < 0 or n ~= math.floor(n) then
    argcheck.error("count", 3, "a count (integer >= 0) expected, got " .. tostring(n), 2)
  end
  local got = ns:mounts():under(path)
  return #got == n, function(negated)
    local items = { { ns, path } }
    for _, m in ipairs(got) do items[#items + 1] = { ns, m } end
    return diagnostic(string.format("expected %s%d mount%s at or below %s, there %s %d",
      negated and "not " or "", n, n == 1 and "" or "s", where(ns, path),
      #got == 1 and "is" or "are", #got), items)
  end
end

-- ---- fails --------------------------------------------------------------------

-- The namespaces a failing call was about: those among its arguments and
-- those its function holds (a closure over sh1), each with the paths
-- among the arguments marked.
local function involved(fn, args)
  local seen, nss, paths = {}, {}, {}
  local function add(v)
    if is_namespace(v) and not seen[v] and not v.closed then
      seen[v] = true
      nss[#nss + 1] = v
    end
  end
  for i = 1, args.n do
    local v = args[i]
    add(v)
    if type(v) == "string" and v:sub(1, 1) == "/" and not v:find("\0", 1, true) then
      paths[#paths + 1] = v
    end
  end
  if debug and debug.getupvalue then
    for i = 1, 255 do
      local name, v = debug.getupvalue(fn, i)
      if not name then break end
      add(v)
    end
  end
  local items = {}
  for _, ns in ipairs(nss) do
    items[#items + 1] = { ns, "" }
    for _, p in ipairs(paths) do items[#items + 1] = { ns, p } end
  end
  return items
end

-- ok, diagnostic, nothing (never invalid) and the message. An errno name
-- that mountns.errno does not know would be named by no message: the
-- check would fail for ever, its negation pass for ever.
function checks.fails(ename, fn, ...)
  if type(ename) ~= "string" then
    argcheck.error("fails", 1, "errno name (\"EINVAL\") expected, got "
      .. (ename == nil and "no value" or type(ename)), 2)
  end
  if type(errno[ename]) ~= "number" then
    argcheck.error("fails", 1, string.format("unknown errno name '%s' (a name of "
      .. "mountns.errno, as EINVAL or ENOENT)", escape(ename)), 2)
  end
  argcheck.typed(fn, "function", "fails", 2, 2)
  local args = { n = select("#", ...), ... }
  local ok, err, msg2 = pcall(fn, ...)
  -- a core call returns its failure (nil, message, errno): that counts too
  if ok and err == nil and type(msg2) == "string" then
    ok, err = false, msg2
  end
  local msg = not ok and tostring(err) or nil
  local hit = msg ~= nil and msg:find("(" .. ename .. ")", 1, true) ~= nil
  return hit, function(negated)
    local head
    if negated then
      head = string.format("expected no error naming %s, got: %s", ename, escape(tostring(msg)))
    elseif ok then
      head = string.format("expected an error naming %s, but the call succeeded", ename)
    else
      head = string.format("expected an error naming %s, got: %s", ename, escape(msg))
    end
    return diagnostic(head, involved(fn, args))
  end, nil, msg
end

-- ---- the assertions -------------------------------------------------------------

--- Run a check for one of its faces (expect's assertions, mountns.luassert):
-- its results (ok, diagnostic, invalid and one more), its usage error
-- raised again at `level` (as `error` counts it from the caller of run).
-- A check raises its usage errors at its caller: here that is pcall, a C
-- function, so the message comes without a position (on every Lua) and
-- gets the face's caller's one; any other error passes as it was.
-- @tparam function check one of `expect.checks`
-- @tparam int level
-- @param ... the check's arguments
function M.run(check, level, ...)
  local ok, a, b, c, d = pcall(check, ...)
  if not ok then
    if type(a) == "string" and a:find("^bad argument #%d+ to '") then error(a, level + 1) end
    error(a, 0)
  end
  return a, b, c, d
end
local run = M.run

local function assertion(check, negate)
  return function(...)
    local ok, diag, invalid = run(check, 2, ...)
    if negate then ok = not ok end
    if invalid then ok = false end
    if not ok then error(diag(negate), 2) end
    return true
  end
end

--- expect.mounted(ns, path [, fields]): a mount exists at path in ns (the
-- topmost one, as `find` answers; or the mount a record names). `fields`
-- says which mount: each given one must match, `source`, `fstype`, `root`
-- (strings), `options` (a comma string or list: every one present, `ro`/
-- `rw` in the mount's options, others in its or its superblock's; each
-- a word of `expect.OPTION_WORDS` or KEY=VALUE), `parent` (a path or
-- record: the mount it is mounted on; not mounted: fails both ways).
M.mounted = assertion(checks.mounted)
--- expect.not_mounted(ns, path [, fields]): no mount at path (with fields:
-- the mount there is not that one).
M.not_mounted = assertion(checks.mounted, true)
--- expect.propagation(ns, path, kind [, details]): "shared", "slave",
-- "shared,slave", "private", "unbindable"... (`mountns.record.PROPAGATIONS`:
-- another word raises, naming them); `details.master` and
-- `details.propagate_from` (a peer group ID or `{ns, path}` of a shared
-- mount) say whose slave it is.
M.propagation = assertion(checks.propagation)
--- expect.peers({ns, path}, {ns, path}, ...): all in one peer group (two
-- mounts at least, no mount twice).
M.peers = assertion(checks.peers)
--- expect.not_peers(a, b): a and b are not in one peer group.
M.not_peers = assertion(checks.peers, true)
--- expect.slave_of({ns, path}, {ns, path}): the first's master is the
-- second's peer group.
M.slave_of = assertion(checks.slave_of)
--- expect.propagate_from({ns, path}, {ns2, path2}): the first's
-- `propagate_from` (the nearest dominating peer group, which the kernel
-- shows only when it differs from the master) is the second's peer group.
M.propagate_from = assertion(checks.propagate_from)

--- expect.locked(ns, path): the mount is locked in ns (it came from a more
-- privileged namespace: it cannot be unmounted or moved apart from its parent).
M.locked = assertion(checks.locked)
--- expect.not_locked(ns, path)
M.not_locked = assertion(checks.locked, true)

--- expect.stack(ns, path, {"srcA", "srcC"}): the mounts stacked at path
-- (the stack path lookup reaches, `t:stack`), bottom to top, by source.
M.stack = assertion(checks.stack)
--- expect.order(ns, {"/a", "/a/1", "/b"}): these mounts (paths or records)
-- appear in this order in the namespace's mountinfo.
M.order = assertion(checks.order)
--- expect.count(ns, path, n): n mounts at or below path (`t:under`).
M.count = assertion(checks.count)

--- expect.golden(expected_text, ns1, ns2, ... [, {source = true}]): the
-- namespaces' tables, normalised together and formatted in the seed
-- article's style (a blank line between namespaces), equal the text; a
-- mismatch shows a line diff. See mountns.format.golden.
M.golden = format.golden -- (not a tail call: it raises at its caller's line)

--- expect.golden_mountinfo(text, [rewrite,] ns1, ns2, ...): the namespaces
-- equal mountinfo lines pasted from a real run (a block per namespace,
-- blank lines between), after `normalize` and a path rewrite
-- (`{["/tmp/W"] = "/"}`: lines under no key are dropped); a mismatch shows
-- a unified diff. See mountns.format.check_golden_mountinfo.
checks.golden_mountinfo = format.check_golden_mountinfo
M.golden_mountinfo = assertion(checks.golden_mountinfo)

--- expect.fails(ename, fn, ...): fn raises an error whose message names
-- that errno ("(EINVAL)"), or returns nil and such a message as the core
-- calls do. Returns the message. A failure shows the tables of the
-- namespaces among the arguments (or held by fn), the paths marked.
function M.fails(ename, fn, ...)
  local ok, diag, _, msg = run(checks.fails, 2, ename, fn, ...)
  if not ok then error(diag(false), 2) end
  return msg
end

-- ---- propagates: mount events -----------------------------------------------

local KINDS = { attach = true, detach = true, change = true }

local function event_text(ns, path, kind)
  return string.format("%s %s in %s", kind, escape(tostring(path)), ns_name(ns))
end

-- The arguments of expect.propagates: expected events, namespaces to watch
-- (each once), options. (level 3: parse_expected, the check, its caller)
local function parse_expected(...)
  local expected, watched, opts = {}, {}, {}
  for i = 1, select("#", ...) do
    local a = select(i, ...)
    if type(a) ~= "table" then
      argcheck.error("propagates", i + 1, "expected {ns, path [, kind]}, got " .. type(a), 3)
    end
    if a[1] == nil then
      argcheck.options(a, "propagates", i + 1, { "fallback", "settle" }, 3)
      argcheck.option(a, "fallback", "boolean", "propagates", i + 1, 3)
      local settle = a.settle
      if settle ~= nil and (type(settle) ~= "number" or settle ~= settle or settle < 0) then
        argcheck.error("propagates", i + 1, "option 'settle' must be a number of seconds "
          .. ">= 0, got " .. tostring(settle), 3)
      end
      for k, v in pairs(a) do opts[k] = v end
    else
      local ns, path, kind = a[1], a[2], a[3] or "attach"
      for k in pairs(a) do
        if k ~= 1 and k ~= 2 and k ~= 3 then
          argcheck.error("propagates", i + 1, "expected {ns, path [, kind]}, got a table with "
            .. "key " .. escape(tostring(k)), 3)
        end
      end
      if not (namespace.is_namespace(ns) or model.is_namespace(ns))
         or (path ~= nil and type(path) ~= "string") then
        argcheck.error("propagates", i + 1, "expected {ns, path [, kind]} with a scenario "
          .. "namespace (of the kernel or of the model) and a path", 3)
      end
      if not KINDS[kind] then
        argcheck.error("propagates", i + 1, string.format("expected {ns, path [, kind]} with "
          .. "kind attach, detach or change, got kind '%s'", escape(tostring(kind))), 3)
      end
      local seen = false
      for _, o in ipairs(watched) do if rawequal(o, ns) then seen = true end end
      if not seen then watched[#watched + 1] = ns end
      if path then
        expected[#expected + 1] = { ns = ns, kind = kind,
                                    path = mtable.normpath(path, "propagates", i + 1, 3) }
      end
    end
  end
  -- no namespace named: nothing watched, so nothing can be seen; the
  -- check would hold whatever event_fn did
  if #watched == 0 then
    argcheck.error("propagates", select("#", ...) + 2, "at least one {ns, path [, kind]} "
      .. "or {ns} expected", 3)
  end
  return expected, watched, opts
end

-- The check behind expect.propagates: run event_fn with a watch on every
-- namespace named, and compare the events with the expected ones.
-- Each argument after event_fn is `{ns, path [, kind]}` (kind "attach" by
-- default), or `{ns}` to watch a namespace that must see no event, or an
-- options table without [1] (`fallback = true`, `settle = seconds` to wait
-- for late events). Returns ok, a function returning the diagnostic,
-- nothing (never invalid), the received events.
local function check_propagates(event_fn, ...)
  argcheck.typed(event_fn, "function", "propagates", 1, 2)
  local expected, watched, opts = parse_expected(...)
  local watches = {}
  local ok, err = pcall(function()
    for i, ns in ipairs(watched) do
      -- a model namespace's events come from its world (model.events)
      local open = model.is_namespace(ns) and model.open_watch or watch.open
      watches[i] = open(ns, { fallback = opts.fallback, interval = false })
    end
    event_fn()
  end)
  local received = {}
  if ok then
    ok, err = pcall(function()
      for _, w in ipairs(watches) do
        for _, ev in ipairs(w:events(opts.settle or 0)) do received[#received + 1] = ev end
      end
    end)
  end
  for _, w in ipairs(watches) do w:close() end
  if not ok then error(err, 0) end

  local used, missing, unexpected = {}, {}, {}
  for _, ev in ipairs(received) do
    local hit
    for j, x in ipairs(expected) do
      if not used[j] and x.ns == ev.ns and x.kind == ev.kind and x.path == ev.mount.target then
        hit = j
        break
      end
    end
    if hit then used[hit] = true else unexpected[#unexpected + 1] = ev end
  end
  for j, x in ipairs(expected) do
    if not used[j] then missing[#missing + 1] = x end
  end
  local pass = #missing == 0 and #unexpected == 0
  -- why: the first missing event's mount, else the first unexpected one's
  local why_ns, why_path
  if missing[1] then why_ns, why_path = missing[1].ns, missing[1].path
  elseif unexpected[1] then why_ns, why_path = unexpected[1].ns, unexpected[1].mount.target end
  return pass, with_why(function()
    local lines = { "expected exactly these mount events:" }
    for _, x in ipairs(expected) do
      lines[#lines + 1] = "  " .. event_text(x.ns, x.path, x.kind)
    end
    if #expected == 0 then lines[#lines + 1] = "  (none)" end
    lines[#lines + 1] = "received:"
    for _, ev in ipairs(received) do lines[#lines + 1] = "  " .. watch.describe(ev) end
    if #received == 0 then lines[#lines + 1] = "  (none)" end
    if #missing > 0 then
      lines[#lines + 1] = "missing:"
      for _, x in ipairs(missing) do
        lines[#lines + 1] = "  " .. event_text(x.ns, x.path, x.kind)
      end
    end
    if #unexpected > 0 then
      lines[#lines + 1] = "unexpected:"
      for _, ev in ipairs(unexpected) do lines[#lines + 1] = "  " .. watch.describe(ev) end
    end
    local items = {}
    for _, ns in ipairs(watched) do items[#items + 1] = { ns, "" } end
    for _, x in ipairs(expected) do items[#items + 1] = { x.ns, x.path } end
    for _, ev in ipairs(received) do
      if ev.mount.target then items[#items + 1] = { ev.ns, ev.mount.target } end
    end
    return diagnostic(table.concat(lines, "\n"), items)
  end, why_ns, why_path), nil, received
end

--- expect.propagates(event_fn, {ns, path [, kind]}, ...): running event_fn
-- produces exactly these mount events (kind "attach" by default, or
-- "detach", "change") in the namespaces named, and no other event there.
-- `{ns}` alone watches a namespace that must see nothing; a table without
-- [1] holds options (`fallback = true`: poll and diff instead of fanotify).
-- On mismatch: expected, received, missing and unexpected events, then the
-- tables. Returns the received events. See mountns.watch.
checks.propagates = check_propagates

function M.propagates(event_fn, ...)
  local ok, diag, _, received = run(check_propagates, 2, event_fn, ...)
  if not ok then error(diag(), 2) end
  return received
end

return M
