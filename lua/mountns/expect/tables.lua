--- expect.tables: the checks of a mount table: `mounted` (and the fields that say
-- which mount), `stack`, `order`, `count`.
-- @module mountns.expect.tables

local mtable = require "mountns.table"
local argcheck = require "mountns.args"
local record = require "mountns.record"
local same_mount = record.same
local escape = require("mountns.core").escape
local D = require "mountns.expect.diagnostic"
local A = require "mountns.expect.arguments"
local ns_name, diagnostic, with_why = D.ns_name, D.diagnostic, D.with_why
local is_record, ns_arg, at_most, list_arg = A.is_record, A.ns_arg, A.at_most, A.list_arg
local mount_arg, describe, where, lookup = A.mount_arg, A.describe, A.where, A.lookup
local same_item, missing_text = A.same_item, A.missing_text

local M = {}
local checks = M

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

return M
