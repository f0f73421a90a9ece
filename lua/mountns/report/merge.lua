--- mountns.report.merge: `mountns report merge OUT IN...`, the reports of
-- the shards of a run (`mountns run --shard K/N`) as one report, in the
-- format they have: JUnit XML or KCIDB v5.3 JSON (told apart by their
-- first character). A merged report is only worth having if it is the
-- whole run, each scenario once, so the merge fails, naming what is
-- wrong, when:
--
-- - a scenario is in two reports (or twice in one): a KCIDB test by its
--   `id`; a JUnit testcase by its classname (the file) and name;
-- - a report is missing: the reports name their shard (`K/N`: a KCIDB
--   test's or build's `misc.shard`; a JUnit `property` `mountns.shard`)
--   and every shard of 1..N must be there once;
-- - a KCIDB file's scenarios have a gap (its tests' `path`s,
--   `mountns.<file>.<n>`, must number 1..max for each file);
-- - the reports disagree on their format, or a KCIDB report is not
--   version 5.3.
--
-- JUnit has no field for a scenario's index: two scenarios of one file
-- with one name cannot be told apart there (KCIDB can), so name them
-- apart to merge their JUnit reports.
--
-- Parsing is the minimum these formats need, in pure Lua (no XML or JSON
-- module is a dependency of mountns): JSON whole; XML elements,
-- attributes, text, comments, CDATA and the prolog, with the text kept as
-- it was written (merging moves elements, it rewrites no text).
-- @module mountns.report.merge

local core = require "mountns.core"
local cli = require "mountns.cli"

local M = {}

-- ---- JSON -------------------------------------------------------------------

local ARRAY = {} -- the metatable that marks a decoded array (even an empty one)

local ESCAPES = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n",
                  r = "\r", t = "\t" }

-- code point -> UTF-8
local function utf8_char(c)
  if c < 0x80 then return string.char(c) end
  if c < 0x800 then return string.char(0xC0 + math.floor(c / 64), 0x80 + c % 64) end
  if c < 0x10000 then
    return string.char(0xE0 + math.floor(c / 4096), 0x80 + math.floor(c / 64) % 64, 0x80 + c % 64)
  end
  return string.char(0xF0 + math.floor(c / 262144), 0x80 + math.floor(c / 4096) % 64,
    0x80 + math.floor(c / 64) % 64, 0x80 + c % 64)
end

--- Decode JSON text: objects as tables, arrays as tables marked as arrays
-- (`is_array`), null as `M.null`. Raises "offset N: why" on bad JSON.
-- @tparam string text
-- @return the value
function M.json_decode(text)
  local pos = 1
  local function fail(why) error(string.format("offset %d: %s", pos - 1, why), 0) end
  local function ws() pos = text:find("[^ \t\r\n]", pos) or #text + 1 end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local s, e, c = text:find('(["\\%z\1-\31])', pos)
      if not s then fail("unfinished string") end
      out[#out + 1] = text:sub(pos, s - 1)
      if c == '"' then pos = e + 1; return table.concat(out) end
      if c ~= "\\" then fail("a control character in a string") end
      local x = text:sub(s + 1, s + 1)
      if ESCAPES[x] then
        out[#out + 1], pos = ESCAPES[x], s + 2
      elseif x == "u" then
        local h = text:match("^%x%x%x%x", s + 2)
        if not h then fail("a bad \\u escape") end
        local cp = tonumber(h, 16)
        pos = s + 6
        local lo = cp >= 0xD800 and cp < 0xDC00 and text:match("^\\u(%x%x%x%x)", pos)
        if lo then
          cp = 0x10000 + (cp - 0xD800) * 1024 + (tonumber(lo, 16) - 0xDC00)
          pos = pos + 6
        end
        out[#out + 1] = utf8_char(cp)
      else
        fail("a bad escape \\" .. x)
      end
    end
  end
  function value()
    ws()
    local c = text:sub(pos, pos)
    if c == "{" then
      local t = {}
      pos = pos + 1
      ws()
      if text:sub(pos, pos) == "}" then pos = pos + 1; return t end
      while true do
        ws()
        if text:sub(pos, pos) ~= '"' then fail("a key expected") end
        local k = str()
        ws()
        if text:sub(pos, pos) ~= ":" then fail("':' expected") end
        pos = pos + 1
        t[k] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return t end
        if d ~= "," then fail("',' or '}' expected") end
      end
    elseif c == "[" then
      local t = setmetatable({}, ARRAY)
      pos = pos + 1
      ws()
      if text:sub(pos, pos) == "]" then pos = pos + 1; return t end
      while true do
        t[#t + 1] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return t end
        if d ~= "," then fail("',' or ']' expected") end
      end
    elseif c == '"' then
      return str()
    end
    for word, v in pairs { ["true"] = true, ["false"] = false, null = M.null } do
      if text:sub(pos, pos + #word - 1) == word then pos = pos + #word; return v end
    end
    local num = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    if num and tonumber(num) then pos = pos + #num; return tonumber(num) end
    fail(c == "" and "unexpected end" or "unexpected " .. string.format("%q", c))
  end
  local v = value()
  ws()
  if pos <= #text then fail("text after the value") end
  return v
end

--- JSON's null.
M.null = setmetatable({}, { __tostring = function() return "null" end })

--- Whether a decoded table is a JSON array.
-- @tparam table t
-- @treturn boolean
function M.is_array(t)
  return getmetatable(t) == ARRAY
end

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local e = ({ ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t",
                 ["\r"] = "\\r" })[c]
    return e or string.format("\\u%04x", c:byte())
  end) .. '"'
end

--- Encode a decoded value as JSON (keys sorted, two spaces a level).
-- @param v
-- @tparam[opt] string indent
-- @treturn string
function M.json_encode(v, indent)
  indent = indent or ""
  local t = type(v)
  if v == M.null then return "null" end
  if t == "string" then return json_string(v) end
  if t == "boolean" then return tostring(v) end
  if t == "number" then
    if v == math.floor(v) and v > -2 ^ 53 and v < 2 ^ 53 then return string.format("%d", v) end
    return string.format("%.17g", v)
  end
  local inner, parts = indent .. "  ", {}
  if M.is_array(v) then
    if #v == 0 then return "[]" end
    for _, x in ipairs(v) do parts[#parts + 1] = inner .. M.json_encode(x, inner) end
    return "[\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  if #keys == 0 then return "{}" end
  table.sort(keys)
  for _, k in ipairs(keys) do
    parts[#parts + 1] = inner .. json_string(k) .. ": " .. M.json_encode(v[k], inner)
  end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
end

-- ---- XML --------------------------------------------------------------------

local ENTITIES = { lt = "<", gt = ">", amp = "&", quot = '"', apos = "'" }

-- an attribute's value as text (its entities decoded)
local function unescape(s)
  return (s:gsub("&(#?x?)(%w+);", function(kind, body)
    if kind == "" then return ENTITIES[body] end
    local cp = tonumber(body, kind == "#x" and 16 or 10)
    return cp and utf8_char(cp)
  end))
end

--- Parse XML: `{tag =, attrs = {name = raw value...}, order = {names},
-- children = {element or {text = raw}...}}` for the root element. Raises
-- "offset N: why".
-- @tparam string text
-- @treturn table the root element
function M.xml_parse(text)
  local pos = 1
  local function fail(why) error(string.format("offset %d: %s", pos - 1, why), 0) end
  local function skip_misc() -- the prolog, comments, white space
    while true do
      local s = text:find("%S", pos)
      if not s then pos = #text + 1; return end
      pos = s
      if text:sub(pos, pos + 1) == "<?" then
        pos = (select(2, text:find("?>", pos, true)) or fail("unfinished <?")) + 1
      elseif text:sub(pos, pos + 3) == "<!--" then
        pos = (select(2, text:find("-->", pos, true)) or fail("unfinished comment")) + 1
      elseif text:sub(pos, pos + 1) == "<!" then
        pos = (select(2, text:find(">", pos, true)) or fail("unfinished <!")) + 1
      else
        return
      end
    end
  end
  local function element()
    local tag = text:match("^<([%w_:%.%-]+)", pos)
    if not tag then fail("an element expected") end
    pos = pos + #tag + 1
    local el = { tag = tag, attrs = {}, order = {}, children = {} }
    while true do
      local s, e, name, q = text:find("^%s+([%w_:%.%-]+)%s*=%s*([\"'])", pos)
      if not s then break end
      local close = text:find(q, e + 1, true) or fail("unfinished attribute " .. name)
      if el.attrs[name] then fail("attribute " .. name .. " twice") end
      el.attrs[name] = text:sub(e + 1, close - 1)
      el.order[#el.order + 1] = name
      pos = close + 1
    end
    local s, e, slash = text:find("^%s*(/?)>", pos)
    if not s then fail("'>' expected in <" .. tag .. ">") end
    pos = e + 1
    if slash == "/" then return el end
    while true do
      local lt = text:find("<", pos, true) or fail("<" .. tag .. "> not closed")
      if lt > pos then el.children[#el.children + 1] = { text = text:sub(pos, lt - 1) } end
      pos = lt
      if text:sub(pos, pos + 8) == "<![CDATA[" then
        local ce = select(2, text:find("]]>", pos, true)) or fail("unfinished CDATA")
        el.children[#el.children + 1] = { text = text:sub(pos, ce) }
        pos = ce + 1
      elseif text:sub(pos, pos + 3) == "<!--" then
        pos = (select(2, text:find("-->", pos, true)) or fail("unfinished comment")) + 1
      elseif text:sub(pos, pos + 1) == "</" then
        local name, ee = text:match("^</([%w_:%.%-]+)%s*>()", pos)
        if name ~= tag then fail("</" .. tostring(name) .. "> closes <" .. tag .. ">") end
        pos = ee
        return el
      else
        el.children[#el.children + 1] = element()
      end
    end
  end
  skip_misc()
  local root = element()
  skip_misc()
  if pos <= #text then fail("text after the root element") end
  return root
end

--- An attribute's value, its entities decoded (nil: absent).
-- @tparam table el
-- @tparam string name
-- @treturn ?string
function M.attr(el, name)
  local v = el.attrs[name]
  return v and unescape(v)
end

--- An element as XML text (as parsed: raw attribute values and text).
-- @tparam table el
-- @tparam[opt] string indent
-- @treturn string
function M.xml_text(el, indent)
  indent = indent or ""
  local out = { indent, "<", el.tag }
  for _, name in ipairs(el.order) do
    out[#out + 1] = " " .. name .. '="' .. el.attrs[name]:gsub('"', "&quot;") .. '"'
  end
  if #el.children == 0 then out[#out + 1] = "/>"; return table.concat(out) end
  out[#out + 1] = ">"
  local only_text = true
  for _, c in ipairs(el.children) do if not c.text then only_text = false end end
  for _, c in ipairs(el.children) do
    if c.text then
      if only_text or c.text:find("%S") then out[#out + 1] = c.text end
    else
      out[#out + 1] = "\n" .. M.xml_text(c, indent .. "  ")
    end
  end
  out[#out + 1] = (only_text and "" or "\n" .. indent) .. "</" .. el.tag .. ">"
  return table.concat(out)
end

-- an attribute set to a number
local function set_attr(el, name, value)
  if not el.attrs[name] then el.order[#el.order + 1] = name end
  el.attrs[name] = value
end

-- ---- the merge --------------------------------------------------------------

-- The shard a report names ("K/N"), or nil. What is wrong with the set of
-- shards (`shards`: {label = shard or false}), or nil.
local function shard_problem(shards)
  local n, have = nil, {}
  local named, unnamed = {}, {}
  for _, s in ipairs(shards) do
    if s.shard then named[#named + 1] = s else unnamed[#unnamed + 1] = s end
  end
  if #named == 0 then return nil end
  if #unnamed > 0 then
    return unnamed[1].label .. " names no shard, " .. named[1].label .. " does (shard "
      .. named[1].shard .. ")"
  end
  for _, s in ipairs(named) do
    local k, m = s.shard:match("^(%d+)/(%d+)$")
    k, m = tonumber(k), tonumber(m)
    if not k or k < 1 or k > m then return s.label .. ": a bad shard '" .. s.shard .. "'" end
    if n and m ~= n then
      return s.label .. " is a shard of " .. m .. ", " .. named[1].label .. " of " .. n
    end
    n = m
    if have[k] then
      return "shard " .. k .. "/" .. n .. " twice: " .. have[k] .. " and " .. s.label
    end
    have[k] = s.label
  end
  local missing = {}
  for k = 1, n do if not have[k] then missing[#missing + 1] = k .. "/" .. n end end
  if #missing > 0 then return "shard " .. table.concat(missing, ", ") .. " missing" end
  return nil
end

-- KCIDB: the reports' objects merged; raises the problem.
local function merge_kcidb(docs)
  local out = { version = { major = 5, minor = 3 }, checkouts = setmetatable({}, ARRAY),
                builds = setmetatable({}, ARRAY), tests = setmetatable({}, ARRAY) }
  local seen = { checkouts = {}, builds = {}, tests = {} }
  local shards, files = {}, {}
  for _, d in ipairs(docs) do
    local v = d.value
    if type(v) ~= "table" or M.is_array(v) or type(v.version) ~= "table"
        or v.version.major ~= 5 or v.version.minor ~= 3 then
      error(d.label .. ": not a KCIDB v5.3 report (version {major = 5, minor = 3})", 0)
    end
    for k, x in pairs(v) do
      if k ~= "version" and k ~= "checkouts" and k ~= "builds" and k ~= "tests" then
        if out[k] == nil then out[k] = x end -- (v5.3 has no other member: kept as is)
      end
    end
    local shard
    for _, kind in ipairs { "checkouts", "builds", "tests" } do
      local list = v[kind]
      if list ~= nil and not (type(list) == "table" and M.is_array(list)) then
        error(d.label .. ": " .. kind .. " is not an array", 0)
      end
      for i, o in ipairs(list or {}) do
        if type(o) ~= "table" or type(o.id) ~= "string" then
          error(string.format("%s: %s[%d] has no id", d.label, kind, i), 0)
        end
        local misc = type(o.misc) == "table" and o.misc or {}
        if type(misc.shard) == "string" and kind ~= "checkouts" then shard = shard or misc.shard end
        local where = seen[kind][o.id]
        if kind == "tests" then
          if where then
            error(string.format("scenario %s ran twice: in %s and %s", core.escape(o.id),
              where, d.label), 0)
          end
          local file, n = tostring(o.path or ""):match("^mountns%.(.+)%.(%d+)$")
          if file then
            files[file] = files[file] or {}
            files[file][tonumber(n)] = true
          end
        end
        -- a checkout or build every shard describes: once
        if not where then
          seen[kind][o.id] = d.label
          out[kind][#out[kind] + 1] = o
        end
      end
    end
    shards[#shards + 1] = { label = d.label, shard = shard }
  end
  local problem = shard_problem(shards)
  if problem then error(problem, 0) end
  local names = {}
  for file in pairs(files) do names[#names + 1] = file end
  table.sort(names)
  for _, file in ipairs(names) do
    local max = 0
    for n in pairs(files[file]) do max = math.max(max, n) end
    for n = 1, max do
      if not files[file][n] then
        error(string.format("scenario mountns.%s.%d is in no report (%s has %d after it)",
          core.escape(file), n, core.escape(file), max), 0)
      end
    end
  end
  return M.json_encode(out) .. "\n"
end

-- JUnit: one testsuites whose testsuites are the reports' own, those of one
-- name (one file) merged into one; raises the problem.
local function merge_junit(docs)
  local suites, by_name, cases, shards = {}, {}, {}, {}
  local function add_suite(s, label)
    local name = M.attr(s, "name") or ""
    local into = by_name[name]
    if not into then
      into = { tag = "testsuite", attrs = {}, order = {}, children = {} }
      for _, a in ipairs(s.order) do set_attr(into, a, s.attrs[a]) end
      for _, a in ipairs { "tests", "failures", "errors", "skipped", "time" } do
        if into.attrs[a] then into.attrs[a] = "0" end
      end
      by_name[name] = into
      suites[#suites + 1] = into
    end
    for _, a in ipairs { "tests", "failures", "errors", "skipped", "time" } do
      local v = tonumber(M.attr(s, a) or "")
      if v then
        local sum = (tonumber(into.attrs[a] or "0") or 0) + v
        set_attr(into, a, a == "time" and string.format("%.3f", sum) or string.format("%d", sum))
      end
    end
    local has_props = false
    for _, c in ipairs(into.children) do if c.tag == "properties" then has_props = true end end
    for _, c in ipairs(s.children) do
      if c.tag == "testcase" then
        local key = (M.attr(c, "classname") or name) .. "\0" .. (M.attr(c, "name") or "")
        if cases[key] then
          error(string.format("scenario %s of %s ran twice: in %s and %s (or two of its "
            .. "scenarios have this name: JUnit cannot tell them apart, KCIDB can)",
            core.escape(M.attr(c, "name") or ""), core.escape(M.attr(c, "classname") or name),
            cases[key], label), 0)
        end
        cases[key] = label
        into.children[#into.children + 1] = c
      elseif c.tag == "properties" then
        if not has_props then
          -- one shard's name is not the merged report's
          local kept = {}
          for _, p in ipairs(c.children) do
            if not (p.tag == "property" and M.attr(p, "name") == "mountns.shard") then
              kept[#kept + 1] = p
            end
          end
          c.children = kept
          table.insert(into.children, 1, c)
          has_props = true
        end
      elseif c.tag then
        into.children[#into.children + 1] = c
      end
    end
  end
  for _, d in ipairs(docs) do
    local root, shard = d.value, nil
    local list = root.tag == "testsuites" and root.children or { root }
    if root.tag ~= "testsuites" and root.tag ~= "testsuite" then
      error(d.label .. ": not a JUnit report (<testsuites> or <testsuite> expected, got <"
        .. root.tag .. ">)", 0)
    end
    for _, s in ipairs(list) do
      if s.tag == "testsuite" then
        for _, c in ipairs(s.children) do
          for _, p in ipairs(c.tag == "properties" and c.children or {}) do
            if p.tag == "property" and M.attr(p, "name") == "mountns.shard" then
              shard = shard or M.attr(p, "value")
            end
          end
        end
        add_suite(s, d.label)
      end
    end
    shards[#shards + 1] = { label = d.label, shard = shard }
  end
  local problem = shard_problem(shards)
  if problem then error(problem, 0) end
  local top = { tag = "testsuites", attrs = {}, order = {}, children = suites }
  set_attr(top, "name", "mountns")
  for _, a in ipairs { "tests", "failures", "errors", "time" } do
    local sum = 0
    for _, s in ipairs(suites) do sum = sum + (tonumber(s.attrs[a] or "0") or 0) end
    set_attr(top, a, a == "time" and string.format("%.3f", sum) or string.format("%d", sum))
  end
  return '<?xml version="1.0" encoding="UTF-8"?>\n' .. M.xml_text(top) .. "\n"
end

--- Merge reports (their texts): the merged report's text, or nil and why
-- they cannot be merged (see the module's description).
-- @tparam {{label=string,text=string},...} inputs each report's text and
-- how to name it (its path)
-- @treturn[1] string the merged report
-- @treturn[1] string its format, "junit" or "kcidb"
-- @return[2] nil
-- @treturn[2] string the problem
function M.merge(inputs)
  if #inputs == 0 then return nil, "no report to merge" end
  local format
  local docs = {}
  for _, input in ipairs(inputs) do
    local first = input.text:match("^%s*(.)")
    local kind = first == "{" and "kcidb" or first == "<" and "junit" or nil
    if not kind then
      return nil, input.label .. ": neither JUnit XML nor KCIDB JSON"
    end
    if format and kind ~= format then
      return nil, input.label .. " is " .. kind .. ", " .. inputs[1].label .. " " .. format
    end
    format = kind
    local ok, v = pcall(kind == "kcidb" and M.json_decode or M.xml_parse, input.text)
    if not ok then
      return nil, input.label .. ": not valid " .. (kind == "kcidb" and "JSON" or "XML")
        .. ": " .. tostring(v)
    end
    docs[#docs + 1] = { label = input.label, value = v }
  end
  local ok, text = pcall(format == "kcidb" and merge_kcidb or merge_junit, docs)
  if not ok then return nil, tostring(text) end
  return text, format
end

--- `mountns report merge OUT IN...` (bin/mountns): the reports IN merged
-- into OUT (written only when the merge succeeds); status 0, or 1 with
-- "mountns: report merge: why" on stderr; a usage error: status 2.
-- @tparam {string,...} args the words after `report`
-- @treturn int the exit status
function M.command(args)
  for _, a in ipairs(args) do
    if a == "-h" or a == "--help" then
      io.write(cli.help("report"))
      return 0
    end
  end
  if args[1] ~= "merge" then
    cli.die("report: " .. (args[1] and "unknown subcommand " .. core.escape(args[1])
      or "a subcommand expected") .. " (report merge OUT IN...)")
  end
  local out = args[2]
  if not out or #args < 3 then
    cli.die("report merge: OUT and at least one IN expected (report merge OUT IN...)")
  end
  local inputs = {}
  for i = 3, #args do
    local f, err = io.open(args[i])
    if not f then
      io.stderr:write("mountns: report merge: ", core.escape(tostring(err)), "\n")
      return 1
    end
    inputs[#inputs + 1] = { label = args[i], text = f:read("*a") }
    f:close()
  end
  local text, why = M.merge(inputs)
  if not text then
    io.stderr:write("mountns: report merge: ", core.escape(why), "\n")
    return 1
  end
  local f, err = io.open(out, "w")
  if not f or not f:write(text) then
    io.stderr:write("mountns: report merge: ", core.escape(tostring(err)), "\n")
    if f then f:close() end
    return 1
  end
  f:close()
  return 0
end

return M
