--- format: mount tables as text that can be compared run after run.
-- The kernel hands out new mount IDs, peer group IDs and anonymous device
-- numbers on every run, so two runs of one scenario never print the same
-- mountinfo. `normalize` renumbers them from 1 in order of first
-- appearance, consistently across several namespaces' tables, so equal
-- structure gives equal text; `format` prints a table as proc(5)
-- mountinfo, as the seed article's `sed 's/ - .*//'` view, or as a
-- findmnt-like tree; `golden` compares tables with expected text and
-- shows a line diff when they differ; style "json" gives a JSON document.
-- Every text field goes through the one escaping rule (`mountns.escape`,
-- in C beside the tree renderer).
-- @module mountns.format

local mtable = require "mountns.table"
local record = require "mountns.record"
local argcheck = require "mountns.args"
local verdict = require "mountns.verdict"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

-- The C core escapes text fields and parses mountinfo. Without it (the
-- model, pure Lua, where there is no core.so) the golden texts still
-- work: every byte outside printable ASCII, the backslash and the extra
-- characters are escaped as \ooo (the core keeps valid UTF-8 as it is);
-- the tree style and pasted mountinfo need the core.
local has_core, core = pcall(require, "mountns.core")
if not has_core then
  local function needs(what)
    return function() error("format: " .. what .. " needs mountns.core (core.so)", 3) end
  end
  core = {
    escape = function(s, extra)
      extra = extra or ""
      return (s:gsub(".", function(c)
        local b = c:byte()
        if b < 32 or b > 126 or c == "\\" or extra:find(c, 1, true) then
          return string.format("\\%03o", b)
        end
      end))
    end,
    tree_text = needs("the tree style"),
    parse_mountinfo = needs("reading mountinfo lines"),
  }
end

-- The record fields (mountns.record), read by name so a copy has those
-- a record computes on first access too (statmount's propagate_from).
local KNOWN = record.FIELDS

-- Fields that name a mount or namespace for the kernel's lifetime (64-bit
-- unique mount IDs, namespace IDs): different on every run, and no
-- structure that the renumbered IDs do not show already.
local function dropped(key)
  return type(key) == "string" and (key:find("unique", 1, true) ~= nil
    or key == "ns_id" or key == "mnt_ns_id")
end
M.dropped = dropped

--- Raise `bad argument #argn to 'fname'` (at level, as error's) unless
-- v, a mount table or a plain list of records, holds records only: an
-- entry that is no table would be indexed deep inside mountns's files.
-- @tparam table v
-- @tparam int argn
-- @tparam string fname
-- @tparam int level
function M.check_records(v, argn, fname, level)
  if mtable.is(v) then return end
  for i = 1, #v do
    if type(v[i]) ~= "table" then
      error(string.format("bad argument #%d to '%s' (mount table or namespace expected, "
        .. "got a table whose entry %d is a %s)", argn, fname, i, type(v[i])), level + 1)
    end
  end
end

-- A mount table, from a table or an object with a :mounts() method.
local function table_of(v, argn, fname)
  if type(v) == "table" and type(v.mounts) == "function" then
    local t, err = v:mounts()
    if not t then error(err, 3) end
    return t
  end
  if type(v) ~= "table" then
    error(string.format("bad argument #%d to '%s' (mount table or namespace "
      .. "expected, got %s)", argn, fname, type(v)), 3)
  end
  M.check_records(v, argn, fname, 3)
  return v
end
M.table_of = table_of

-- A numbering: value -> 1, 2, ... in order of first call.
local function numbering()
  local map, n = {}, 0
  return function(v)
    if v == nil then return nil end
    local k = map[v]
    if not k then
      n = n + 1
      k = n
      map[v] = k
    end
    return k
  end, map
end

-- The renumbering of tables (a list), the one rule of `normalize` and of
-- the golden text: a function that, called with each record of the tables
-- in order (table by table, record by record), returns its new id,
-- parent_id, major, minor, shared, master and propagate_from. The numbers
-- depend on that order, so each caller walks the tables once, in it.
local function renumbering(tables)
  local mount_no, mounts = numbering()
  local group_no = numbering()
  local dev_no = numbering()
  for _, t in ipairs(tables) do
    for _, m in ipairs(t) do mount_no(m.id) end
  end
  return function(m)
    local parent = mount_no(m.parent_id)
    local shared = group_no(m.shared)
    local master = group_no(m.master)
    local from = group_no(m.propagate_from)
    local major, minor = m.major, m.minor
    if major ~= nil and minor ~= nil then major, minor = 0, dev_no(m.major .. ":" .. m.minor) end
    return mounts[m.id], parent, major, minor, shared, master, from
  end
end

--- Copies of mount tables with their kernel-chosen numbers renumbered.
-- Mount IDs are numbered from 1 in order of appearance across all tables
-- (table by table, record by record); parent IDs that are no mount of any
-- table (the parent of a namespace's root) come next, in order of
-- appearance. Peer group IDs (`shared`, `master`, `propagate_from`) are
-- numbered from 1 the same way, and so are devices: a `major:minor` pair
-- becomes `0:N`. Fields that are unique for the kernel's lifetime
-- (`unique_id`, namespace IDs) are dropped. The inputs are not modified.
-- @param ... mount tables, or objects with a `:mounts()` method
-- @return one normalised mount table per argument
-- @usage local a, b = mountns.normalize(sh1:mounts(), sh2:mounts())
function M.normalize(...)
  local n = select("#", ...)
  local tables = {}
  for i = 1, n do tables[i] = table_of(select(i, ...), i, "normalize") end
  local renumber = renumbering(tables)
  local out = {}
  for i, t in ipairs(tables) do
    local copy = {}
    for j, m in ipairs(t) do
      local c = {}
      for k, v in pairs(m) do
        if not dropped(k) then c[k] = v end
      end
      for _, k in ipairs(KNOWN) do c[k] = m[k] end
      c.id, c.parent_id, c.major, c.minor, c.shared, c.master, c.propagate_from = renumber(m)
      copy[j] = c
    end
    out[i] = mtable.new(copy)
  end
  return unpack(out, 1, n)
end

-- ---- text --------------------------------------------------------------

--- Escape a field for mountinfo-style text: `mountns.escape` (control
-- characters, DEL, C1 controls, U+2028 and U+2029, bytes that are not
-- UTF-8 and the backslash as `\ooo`) plus the space, so that space, tab,
-- newline and backslash come out as the kernel's mangle() writes them:
-- `\040`, `\011`, `\012`, `\134`. `parse_mountinfo` reads every such escape back.
-- @tparam string s
-- @treturn string
function M.mangle(s)
  return core.escape(tostring(s), " ")
end
local mangle = M.mangle

-- "ID PARENT MAJ:MIN ROOT TARGET OPTIONS[ OPTIONAL...]" of record m, with
-- the numbers given (m's own, or their renumbering: the golden text
-- renders them without a normalised copy of m); with `source`,
-- " - SOURCE" after it (the article style's `source` option).
local function article_line(m, id, parent, major, minor, shared, master, from, source)
  local optional = record.optional_of(shared, master, from, m.unbindable)
  local line = string.format("%d %d %d:%d %s %s %s%s", id, parent, major, minor,
    mangle(m.root), mangle(m.target), mangle(m.options),
    optional == "" and "" or " " .. optional)
  if source then return line .. " - " .. mangle(m.source or "none") end
  return line
end

-- The article line of m with its own numbers.
local function head(m, source)
  return article_line(m, m.id, m.parent_id, m.major, m.minor, m.shared, m.master,
    m.propagate_from, source)
end

local styles = {}

-- proc(5) mountinfo: parse_mountinfo reads it back to the same table.
function styles.mountinfo(t)
  local out = {}
  for i, m in ipairs(t) do
    out[i] = string.format("%s - %s %s %s", head(m), mangle(m.fstype),
      mangle(m.source or "none"), mangle(m.super_options))
  end
  return out
end

-- The seed article's view: mountinfo | sed 's/ - .*//'; with
-- opts.source, " - SOURCE" after it (stacked mounts and binds of one
-- filesystem then differ by more than their IDs).
function styles.article(t, opts)
  local out = {}
  for i, m in ipairs(t) do out[i] = head(m, opts.source) end
  return out
end

-- findmnt-like tree (tostring of a mount table) with the paths mangled
-- (spaces escaped too), so that each column is one word.
function styles.tree(t)
  local copy = {}
  for i, m in ipairs(t) do
    local c = {}
    for k, v in pairs(m) do c[k] = v end
    c.source = m.source or "none"
    copy[i] = c
  end
  local out = {}
  for line in core.tree_text(copy, " "):gmatch("([^\n]*)\n") do
    out[#out + 1] = (line:gsub(" +$", ""))
  end
  return out
end

-- {"mounts":[{...},\n{...}]}\n: one record a line, the record fields
-- present in the order of record.FIELDS, text fields escaped by the rule,
-- then JSON-quoted (rendered in C: core.json_text). The whole text.
function styles.json(t)
  return core.json_text(t)
end

--- A mount table as text, one line per mount, ending in a newline (an
-- empty table gives "", but `"json"` gives `{"mounts":[]}`).
-- @param t a mount table, or an object with a `:mounts()` method
-- @tparam[opt="article"] string style `"mountinfo"` (proc(5) lines, paths
-- escaped like the kernel's), `"article"` (the seed article's
-- `sed 's/ - .*//'` view: `ID PARENT MAJ:MIN ROOT TARGET OPTIONS [optional
-- fields]`) or `"tree"` (findmnt-like: TARGET SOURCE FSTYPE ID PARENT
-- PROPAGATION GROUP MASTER) or `"json"` (`{"mounts":[{"id":21,...},...]}`,
-- one record a line, text fields escaped as `mountns.escape` does, then
-- JSON-quoted: the document is valid UTF-8 whatever bytes the paths hold)
-- @tparam[opt] table opts `source = true` (the `"article"` style only, the
-- others show the source anyway): each line ends in ` - SOURCE`
-- @treturn string
-- @usage print(mountns.format(mountns.normalize(ns:mounts()), "tree"))
function M.format(t, style, opts)
  t = table_of(t, 1, "format")
  style = style or "article"
  local f = type(style) == "string" and styles[style]
  if not f then
    error(string.format("bad argument #2 to 'format' (invalid option '%s': "
      .. "\"mountinfo\", \"article\", \"tree\" or \"json\" expected)", tostring(style)), 2)
  end
  opts = argcheck.options(opts, "format", 3, { "source" }, 2)
  if opts.source ~= nil and style ~= "article" then
    argcheck.error("format", 3, "option 'source' is for the \"article\" style (the "
      .. style .. " style shows the source anyway)", 2)
  end
  if opts.source ~= nil and type(opts.source) ~= "boolean" then
    argcheck.error("format", 3, "option 'source' must be a boolean, got " .. type(opts.source), 2)
  end
  local lines = f(t, opts)
  if type(lines) == "string" then return lines end
  if #lines == 0 then return "" end
  return table.concat(lines, "\n") .. "\n"
end

-- ---- golden ------------------------------------------------------------

-- Lines of a text with trailing white space cut off each line, blank
-- lines cut at both ends and the indentation all lines share removed (a
-- golden text indented in a script, or pasted from `mountns run --golden`).
local function lines_of(text)
  local lines = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = (line:gsub("%s+$", ""))
  end
  while #lines > 0 and lines[#lines] == "" do lines[#lines] = nil end
  while #lines > 0 and lines[1] == "" do table.remove(lines, 1) end
  local indent
  for _, line in ipairs(lines) do
    if line ~= "" then
      local lead = #line:match("^ *")
      if not indent or lead < indent then indent = lead end
    end
  end
  if indent and indent > 0 then
    for i, line in ipairs(lines) do lines[i] = line:sub(indent + 1) end
  end
  return lines
end
M.lines_of = lines_of

-- Above this many cells the middle of a diff is shown as all removed then
-- all added instead of an LCS (quadratic in time and memory).
local LCS_CELLS = 4000000

-- The edit script from a to b: list of {op, text, ia, ib}, op " ", "-", "+".
local function edits(a, b)
  local pre = 0
  while pre < #a and pre < #b and a[pre + 1] == b[pre + 1] do pre = pre + 1 end
  local suf = 0
  while suf < #a - pre and suf < #b - pre and a[#a - suf] == b[#b - suf] do
    suf = suf + 1
  end
  local out = {}
  for i = 1, pre do out[#out + 1] = { " ", a[i], i, i } end
  local n, m = #a - pre - suf, #b - pre - suf
  if n * m > LCS_CELLS then
    for i = 1, n do out[#out + 1] = { "-", a[pre + i], pre + i, nil } end
    for j = 1, m do out[#out + 1] = { "+", b[pre + j], nil, pre + j } end
  else
    -- L[i][j]: length of the LCS of a[pre+i..] and b[pre+j..]
    local L = {}
    for i = n + 1, 1, -1 do
      local row, below = {}, L[i + 1]
      for j = m + 1, 1, -1 do
        if i > n or j > m then
          row[j] = 0
        elseif a[pre + i] == b[pre + j] then
          row[j] = below[j + 1] + 1
        else
          local d, r = below[j], row[j + 1]
          row[j] = d > r and d or r
        end
      end
      L[i] = row
    end
    local i, j = 1, 1
    while i <= n or j <= m do
      if i <= n and j <= m and a[pre + i] == b[pre + j] then
        out[#out + 1] = { " ", a[pre + i], pre + i, pre + j }
        i, j = i + 1, j + 1
      elseif i <= n and (j > m or L[i + 1][j] >= L[i][j + 1]) then
        -- removals first, as diff -u prints a changed block
        out[#out + 1] = { "-", a[pre + i], pre + i, nil }
        i = i + 1
      else
        out[#out + 1] = { "+", b[pre + j], nil, pre + j }
        j = j + 1
      end
    end
  end
  for k = 1, suf do
    out[#out + 1] = { " ", a[#a - suf + k], #a - suf + k, #b - suf + k }
  end
  return out
end

local CONTEXT = 3

--- A unified line diff of two texts (`---`/`+++` headers, `@@` hunks with
-- three lines of context), or nil when their lines are equal (trailing
-- white space and blank lines at either end ignored).
-- @tparam string expected
-- @tparam string got
-- @tparam[opt] string name_a default "expected"
-- @tparam[opt] string name_b default "got"
-- @treturn string|nil
function M.diff_text(expected, got, name_a, name_b)
  local a, b = lines_of(expected), lines_of(got)
  local ed = edits(a, b)
  local changed = {}
  for k, e in ipairs(ed) do
    if e[1] ~= " " then changed[#changed + 1] = k end
  end
  if #changed == 0 then return nil end
  local out = { "--- " .. (name_a or "expected"), "+++ " .. (name_b or "got") }
  local c = 1
  while c <= #changed do
    local first, last = changed[c], changed[c]
    -- extend the hunk while the next change is close enough to share context
    while c < #changed and changed[c + 1] - last <= 2 * CONTEXT do
      c = c + 1
      last = changed[c]
    end
    c = c + 1
    local from = math.max(1, first - CONTEXT)
    local to = math.min(#ed, last + CONTEXT)
    -- hunk header: the first line number and count on each side
    local sa, sb, na, nb
    for k = from, to do
      local e = ed[k]
      if e[3] then sa = sa or e[3]; na = (na or 0) + 1 end
      if e[4] then sb = sb or e[4]; nb = (nb or 0) + 1 end
    end
    if not sa then -- no line of a in the hunk: the line before it
      sa = 0
      for k = from - 1, 1, -1 do
        if ed[k][3] then sa = ed[k][3]; break end
      end
    end
    if not sb then
      sb = 0
      for k = from - 1, 1, -1 do
        if ed[k][4] then sb = ed[k][4]; break end
      end
    end
    out[#out + 1] = string.format("@@ -%d,%d +%d,%d @@", sa, na or 0, sb, nb or 0)
    for k = from, to do out[#out + 1] = ed[k][1] .. ed[k][2] end
  end
  return table.concat(out, "\n")
end

-- A trailing options table of golden: a plain table (no metatable, so no
-- mount table and no namespace) with keys, no records and no `mounts`.
local function trailing_options(n, ...)
  local last = n > 0 and select(n, ...) or nil
  if type(last) == "table" and getmetatable(last) == nil and last[1] == nil
     and last.mounts == nil and next(last) ~= nil then
    return last, n - 1
  end
  return nil, n
end

-- The options of golden and golden_text (`source`, a boolean), checked
-- for fname's argument argn, raised at level as argcheck's.
local function golden_options(opts, fname, argn, level)
  opts = argcheck.options(opts, fname, argn, { "source" }, level + 1)
  if opts.source ~= nil and type(opts.source) ~= "boolean" then
    argcheck.error(fname, argn, "option 'source' must be a boolean, got " .. type(opts.source),
      level + 1)
  end
  return opts
end

-- tables[1..n] normalised together, each in the article style, a blank
-- line between them: format(normalize(...)[i], "article", opts) joined
-- with "\n" (spec 34 compares the two), rendered from the records and
-- their renumbering (`renumbering`, `article_line`: the one rule of both)
-- without normalised copies, which cost 3-4 times the text (`mountns
-- check` renders it after every step, on the kernel and on the model:
-- issue 28).
local function golden_text(tables, n, opts)
  local source = opts.source
  local renumber = renumbering(tables)
  local out, k = {}, 0
  for i = 1, n do
    if i > 1 then k = k + 1; out[k] = "\n" end -- a blank line between tables
    for _, m in ipairs(tables[i]) do
      local id, parent, major, minor, shared, master, from = renumber(m)
      out[k + 1] = article_line(m, id, parent, major, minor, shared, master, from, source)
      out[k + 2] = "\n"
      k = k + 2
    end
  end
  return table.concat(out, "", 1, k)
end

--- The golden texts of mount tables normalised together, apart: one text
-- a table (`golden_text`'s blocks, without the blank lines between them).
-- `mountns run --both` numbers an answer (a root view, a record) with the
-- tables of the namespaces before it, so its peer groups and mounts are
-- compared by their relation to those, not by the kernel's numbers.
-- @tparam {table,...} tables mount tables (or lists of records)
-- @treturn {string,...} one text per table
function M.golden_parts(tables)
  local renumber = renumbering(tables)
  local parts = {}
  for i, t in ipairs(tables) do
    local lines = {}
    for j, m in ipairs(t) do lines[j] = article_line(m, renumber(m)) .. "\n" end
    parts[i] = table.concat(lines)
  end
  return parts
end

--- The golden text of namespaces or tables: normalised together, each in
-- the article style, a blank line between them (what `golden` compares
-- with, and what `mountns run --golden` prints).
-- @param ... mount tables or namespaces
-- @tparam[opt] table opts last: `source = true` shows each mount's source
-- @treturn string
function M.golden_text(...)
  local opts, n = trailing_options(select("#", ...), ...)
  opts = golden_options(opts, "golden_text", n + 1, 2)
  local tables = {}
  for i = 1, n do tables[i] = table_of(select(i, ...), i, "golden_text") end
  return golden_text(tables, n, opts)
end

--- Compare mount tables with a golden text.
-- The tables are normalised together (`normalize`), each is formatted in
-- the article style and the texts are joined with a blank line between
-- namespaces. Trailing white space and blank lines at either end are
-- ignored.
-- @tparam string expected the golden text
-- @param ... mount tables, or objects with a `:mounts()` method (scenario
-- namespaces), in the order of the text; last, optionally, `{source =
-- true}`: each line ends in ` - SOURCE` (see `format`)
-- @treturn string the normalised text (when it matches)
-- @raise "golden: mount tables differ" with a unified diff (`-` expected,
-- `+` got) and the whole normalised text, to paste when the change is
-- meant
-- @usage expect.golden([[
-- 1 3 0:1 / / rw,relatime
-- 2 1 0:2 / /X rw,relatime shared:1
-- ]], sh1)
-- @usage expect.golden(text, sh1, sh2, { source = true }) -- lines end in " - SOURCE"
function M.golden(expected, ...)
  if type(expected) ~= "string" then
    error("bad argument #1 to 'golden' (string expected, got "
      .. type(expected) .. ")", 2)
  end
  local opts, n = trailing_options(select("#", ...), ...)
  if n == 0 then
    error("bad argument #2 to 'golden' (mount table or namespace expected, "
      .. "got no value)", 2)
  end
  opts = golden_options(opts, "golden", n + 2, 2)
  local tables = {}
  for i = 1, n do tables[i] = table_of(select(i, ...), i + 1, "golden") end
  local got = golden_text(tables, n, opts)
  local d = M.diff_text(expected, got)
  if d then
    -- a failed check, not an error (mountns.verdict)
    verdict.raise("fail", "golden: mount tables differ (- expected, + got):\n" .. d
      .. "\n\nthe whole normalised text:\n" .. got, 2)
  end
  return got
end

-- ---- golden tables from kernel lines ----------------------------------

-- The text's blocks (one per namespace, split at blank lines), each a
-- list of lines.
local function blocks_of(text)
  local out, cur = {}, nil
  for _, line in ipairs(lines_of(text)) do
    if line:match("^%s*$") then
      cur = nil
    else
      if not cur then cur = {}; out[#out + 1] = cur end
      cur[#cur + 1] = (line:gsub("^%s+", ""))
    end
  end
  return out
end

-- A block parsed: proc(5) mountinfo lines, or the article's view of them
-- (`sed 's/ - .*//'`: no " - FSTYPE SOURCE SUPER", which the comparison
-- does not read anyway).
local function parse_block(lines)
  local text = table.concat(lines, "\n") .. "\n"
  local t, err = core.parse_mountinfo(text)
  if t then return mtable.new(t) end
  if not text:find(" - ", 1, true) then
    local full = {}
    for i, l in ipairs(lines) do full[i] = l .. " - none none rw" end
    local t2 = core.parse_mountinfo(table.concat(full, "\n") .. "\n")
    if t2 then return mtable.new(t2) end
  end
  return nil, err
end

-- The rewrite rule that applies to a mount point: the longest prefix.
local function rewritten(target, rules)
  local best
  for _, r in ipairs(rules) do
    local from = r[1]
    if target == from or from == "/" or target:sub(1, #from + 1) == from .. "/" then
      if not best or #from > #best[1] then best = r end
    end
  end
  if not best then return nil end
  local rest = best[1] == "/" and target or target:sub(#best[1] + 1)
  return mtable.normpath(best[2] .. "/" .. rest)
end

-- The rewrite table checked: {["/tmp/W"] = "/"}, absolute paths both.
local function rewrite_rules(rewrite, level)
  local rules = {}
  for from, to in pairs(rewrite) do
    if type(from) ~= "string" or type(to) ~= "string" or from:sub(1, 1) ~= "/"
       or to:sub(1, 1) ~= "/" then
      argcheck.error("golden_mountinfo", 2, "a path rewrite {[\"/from\"] = \"/to\"} of "
        .. "absolute paths expected, got " .. tostring(from) .. " = " .. tostring(to), level + 1)
    end
    rules[#rules + 1] = { mtable.normpath(from), mtable.normpath(to) }
  end
  return rules
end

--- Compare namespaces with mountinfo lines pasted from a real run.
-- The text holds one block of lines per namespace, blocks split by blank
-- lines: proc(5) mountinfo lines, or the article's `sed 's/ - .*//'` view
-- of them. With a rewrite table, each mount point under a key is moved
-- under its value (`{["/tmp/W"] = "/"}`: `/tmp/W/X` becomes `/X`, the
-- longest key wins) and the lines under no key are dropped (the rest of
-- the machine the run was made on). Both sides are then normalised
-- (`normalize`, each side on its own) and compared in the article style.
-- @tparam string text the pasted lines
-- @tparam[opt] table rewrite `{["/from"] = "/to"}`
-- @param ... namespaces or mount tables, in the order of the blocks
-- @treturn boolean whether they match
-- @treturn function the diagnostic (a unified diff, - pasted, + got)
-- @raise a usage error at the caller's line (the check of
-- `expect.golden_mountinfo`: its forms raise it again at theirs) for a bad
-- argument, a block of the text that is not mountinfo, or a count of blocks
-- other than the count of namespaces
function M.check_golden_mountinfo(text, rewrite, ...)
  if type(text) ~= "string" then
    argcheck.error("golden_mountinfo", 1, "string expected, got " .. type(text), 2)
  end
  local args = { n = select("#", ...), ... }
  if rewrite ~= nil and (type(rewrite) ~= "table" or getmetatable(rewrite) ~= nil
     or rewrite[1] ~= nil) then
    -- no rewrite: the second argument is the first namespace
    table.insert(args, 1, rewrite)
    args.n = args.n + 1
    rewrite = nil
  end
  if args.n == 0 then
    argcheck.error("golden_mountinfo", 3, "mount table or namespace expected, got no value", 2)
  end
  local rules = rewrite and rewrite_rules(rewrite, 2)
  local tables = {}
  for i = 1, args.n do tables[i] = table_of(args[i], i + 2, "golden_mountinfo") end
  local pasted, problem = {}, nil
  for i, b in ipairs(blocks_of(text)) do
    local t, err = parse_block(b)
    if not t then
      problem = string.format("block %d of the text is not mountinfo: %s", i, err)
      break
    end
    if rules then
      local kept = {}
      for _, m in ipairs(t) do
        local to = rewritten(m.target, rules)
        if to then
          local c = {}
          for k, v in pairs(m) do c[k] = v end
          c.target = to
          kept[#kept + 1] = c
        end
      end
      t = mtable.new(kept)
    end
    pasted[i] = t
  end
  if not problem and #pasted ~= args.n then
    problem = string.format("the text has %d block(s) of lines, %d namespace(s) given",
      #pasted, args.n)
  end
  -- a text that cannot be compared is a usage error: it would fail for
  -- ever, and its negation pass for ever
  if problem then argcheck.error("golden_mountinfo", 1, problem, 2) end
  local expected = golden_text(pasted, #pasted, {})
  local got = golden_text(tables, args.n, {})
  local d = M.diff_text(expected, got, "pasted", "got")
  return d == nil, function()
    return "golden_mountinfo: mount tables differ (- pasted, + got):\n" .. tostring(d)
      .. "\n\nthe pasted lines, normalised:\n" .. expected
      .. "\n\nthe whole normalised text:\n" .. got
  end
end

return M
