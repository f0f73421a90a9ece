-- Golden tables and pictures against the real kernel: normalize, format,
-- golden and dot on mount tables of propagation set-ups built in isolated
-- children (the seed article's shared /X and /Y seen from two namespaces).
local mountns = require "mountns"
local core = require "mountns.core"
local format = require "mountns.format"
local helper = require "helper"

local isolate = mountns.isolate

-- In an isolated child: a new private namespace whose / is a fresh tmpfs,
-- so its table holds only what the caller mounts. /proc must be pinned
-- before the first pivot (there is none after it).
local function fresh_root()
  assert(mountns.unshare())
  -- under a tmpfs of the child's own: a directory made on the host's /tmp
  -- would stay there after the run
  local nr = helper.sandbox() .. "/root"
  assert(mountns.mkdir(nr, { parents = true }))
  assert(mountns.mount("root", nr, "tmpfs"))
  assert(mountns.mkdir(nr .. "/old"))
  assert(mountns.chdir(nr))
  assert(mountns.pivot_root(".", "old"))
  assert(mountns.chdir("/"))
  assert(mountns.umount("/old", "detach"))
end

-- The article in the child: shared /X and /Y in sh1, sh2 a copy of it,
-- then /Z a bind of /X in sh1. Variants change one thing: "z-private"
-- makes /Z private (a missing peer), "slave" makes sh2's copies slaves.
-- Both namespaces stay alive in `keep`; returns {sh1 table, sh2 table}.
local function article(variant, keep)
  fresh_root()
  for _, d in ipairs { "/X", "/Y", "/Z" } do assert(mountns.mkdir(d)) end
  assert(mountns.mount("sda3", "/X", "tmpfs"))
  assert(mountns.make_shared("/X"))
  assert(mountns.mount("sda5", "/Y", "tmpfs"))
  assert(mountns.make_shared("/Y"))
  local sh1 = assert(mountns.namespace())
  assert(mountns.unshare { propagation = variant == "slave" and "slave" or "unchanged" })
  local sh2 = assert(mountns.namespace())
  assert(sh1:enter())
  assert(mountns.bind("/X", "/Z"))
  if variant == "z-private" then assert(mountns.make_private("/Z")) end
  local t1 = assert(mountns.mountinfo())
  assert(sh2:enter())
  local t2 = assert(mountns.mountinfo())
  keep[#keep + 1] = sh1
  keep[#keep + 1] = sh2
  return { t1, t2, ids = { sh1:id(), sh2:id() } }
end

-- Run the article variants one after the other in one child, every
-- namespace kept alive to the end: no run can reuse another's mount IDs.
local function runs(...)
  return isolate(function(...)
    helper.sandbox()
    assert(core.pin_proc())
    local base = assert(mountns.namespace())
    local keep, out = {}, {}
    for i = 1, select("#", ...) do
      assert(base:enter())
      out[i] = article(select(i, ...), keep)
    end
    return out
  end, ...)
end

-- The normalised article-style text of a run's two tables.
local function text(run)
  local a, b = mountns.normalize(run[1], run[2])
  return mountns.format(a, "article") .. "\n" .. mountns.format(b, "article")
end

local function find(t, target)
  return mountns.table.new(t):find(target)
end

describe("format", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  describe("normalize", function()
    it("gives two runs of one set-up the same text while the raw IDs differ", function()
      local r = runs("article", "article")
      -- raw: the kernel handed out other numbers the second time
      assert.are_not.equal(find(r[1][1], "/X").id, find(r[2][1], "/X").id)
      assert.are_not.equal(find(r[1][2], "/X").id, find(r[2][2], "/X").id)
      assert.are_not.equal(mountns.format(r[1][1], "mountinfo"),
                           mountns.format(r[2][1], "mountinfo"))
      -- normalised: equal, and the structure is the article's
      assert.are.equal(text(r[1]), text(r[2]))
      local a, b = mountns.normalize(r[1][1], r[1][2])
      assert.are.same({ "/", "/X", "/Y", "/Z" }, { a[1].target, a[2].target, a[3].target,
                                                   a[4].target })
      assert.are.same({ 1, 2, 3, 4 }, { a[1].id, a[2].id, a[3].id, a[4].id })
      assert.are.same({ 1, 1, 1 }, { a[2].parent_id, a[3].parent_id, a[4].parent_id })
      assert.are.equal(1, a:find("/X").shared)
      assert.are.equal(2, a:find("/Y").shared)
      assert.are.equal(1, a:find("/Z").shared)
      assert.are.equal(1, b:find("/X").shared)
      assert.are.equal(2, b:find("/Y").shared)
      -- the two roots hang off two mounts outside both tables: numbered next
      assert.are.equal(#a + #b + 1, a[1].parent_id)
      assert.are.equal(#a + #b + 2, b[1].parent_id)
      -- devices: one per superblock, shared by a bind and by sh2's copies
      assert.are.same({ 0, 1 }, { a[1].major, a[1].minor })
      assert.are.equal(a:find("/X").minor, a:find("/Z").minor)
      assert.are.equal(a:find("/X").minor, b:find("/X").minor)
      assert.are_not.equal(a:find("/X").minor, a:find("/Y").minor)
    end)

    it("run after run, in separate children, the text is the same", function()
      assert.are.equal(text(runs("article")[1]), text(runs("article")[1]))
    end)

    it("a structural change changes the text: a missing peer, a slave", function()
      local r = runs("article", "z-private", "slave")
      local base, nopeer, slave = text(r[1]), text(r[2]), text(r[3])
      assert.are_not.equal(base, nopeer)
      assert.are_not.equal(base, slave)
      -- the missing peer: only /Z's line differs, and it lost shared:1
      local d = format.diff_text(base, nopeer)
      local minus, plus = {}, {}
      for line in d:gmatch("[^\n]+") do
        if line:match("^%-[^-]") then minus[#minus + 1] = line end
        if line:match("^%+[^+]") then plus[#plus + 1] = line end
      end
      assert.are.equal(1, #minus)
      assert.are.equal(1, #plus)
      assert.truthy(minus[1]:match(" /Z .* shared:1$"))
      assert.are.equal((minus[1]:sub(2):gsub(" shared:1$", "")), plus[1]:sub(2))
      -- the slave: sh2's /X and /Y now name their masters, sh1 is unchanged
      local _, b = mountns.normalize(r[3][1], r[3][2])
      assert.are.equal("slave", b:find("/X").propagation)
      assert.are.equal(1, b:find("/X").master)
      assert.are.equal(2, b:find("/Y").master)
      assert.are.equal(base:match("^(.-\n)\n"), slave:match("^(.-\n)\n"))
    end)

    it("renumbers across tables, drops unique IDs, leaves its inputs alone", function()
      local r = runs("article")[1]
      for i, m in ipairs(r[1]) do m.unique_id = 0x100000000 + i end
      local raw_x = find(r[1], "/X").id
      local a, b = mountns.normalize(r[1], r[2])
      assert.is_nil(a[1].unique_id)
      assert.are.equal(raw_x, find(r[1], "/X").id)
      assert.are.equal(0x100000001, r[1][1].unique_id)
      -- sh2's mounts come after sh1's: numbers go on, they do not restart
      assert.are.equal(#a + 1, b[1].id)
      -- a table alone is numbered from 1
      local only = mountns.normalize(r[2])
      assert.are.equal(1, only[1].id)
      assert.are.equal(1, only:find("/X").shared)
      assert.has_error(function() mountns.normalize(r[1], 42) end,
        "bad argument #2 to 'normalize' (mount table or namespace expected, got number)")
    end)
  end)

  describe("format", function()
    it("mountinfo style is the kernel's own text, and parses back", function()
      local raw, t = isolate(function()
        local base = helper.sandbox()
        -- mount points, a bind root and a source with every mangled byte
        local names = { "/a b", "/t\tab", "/new\nline", "/back\\slash", "/all \t\n\\" }
        for _, n in ipairs(names) do assert(mountns.mkdir(base .. n)) end
        assert(mountns.mount("my src", base .. names[1], "tmpfs"))
        assert(mountns.mkdir(base .. names[1] .. "/sub\tdir\\x"))
        assert(mountns.make_shared(base .. names[1]))
        for i = 2, #names do
          assert(mountns.bind(base .. names[1] .. "/sub\tdir\\x", base .. names[i]))
        end
        assert(mountns.make_unbindable(base .. names[5]))
        return assert(core.read_mountinfo()), assert(mountns.mountinfo())
      end)
      t = mountns.table.new(t)
      assert.are.equal("/sub\tdir\\x", t:find("/tmp/mns/new\nline").root)
      assert.are.equal(raw, mountns.format(t, "mountinfo"))
      local back = assert(mountns.parse_mountinfo(mountns.format(t, "mountinfo")))
      assert.are.same(t, back)
      -- the normalised table too (its shape: plain records)
      local n = mountns.normalize(t)
      local nback = assert(mountns.parse_mountinfo(mountns.format(n, "mountinfo")))
      assert.are.same(n, nback)
      assert.truthy(raw:find(" /tmp/mns/all\\040\\011\\012\\134 ", 1, true))
      assert.truthy(raw:find(" - tmpfs my\\040src ", 1, true))
    end)

    it("article style is mountinfo without ' - ...', tree has the columns", function()
      local r = runs("slave")[1]
      local mi = mountns.format(r[2], "mountinfo")
      local art = mountns.format(r[2], "article")
      assert.are.equal(mi:gsub(" %- [^\n]*", ""), art)
      local a, b = mountns.normalize(r[1], r[2])
      local tree = mountns.format(b, "tree")
      assert.truthy(tree:match("^TARGET +SOURCE +FSTYPE +ID +PARENT +PROPAGATION +GROUP +MASTER\n"))
      -- sh2's /X: a slave of group 1 (sh1's /X, /Z)
      local x = b:find("/X")
      assert.truthy(tree:find("\n├─/X +sda3 +tmpfs +" .. x.id .. " +" .. x.parent_id
        .. " +slave +1\n"))
      assert.truthy(mountns.format(a, "tree"):find("\n└─/Z +sda3 +tmpfs +4 +1 +shared +1\n"))
      -- the default style is the article's; an empty table is empty text
      assert.are.equal(mountns.format(a, "article"), mountns.format(a))
      assert.are.equal("", mountns.format(mountns.table.new {}, "mountinfo"))
      assert.has_error(function() mountns.format(a, "yaml") end,
        "bad argument #2 to 'format' (invalid option 'yaml': \"mountinfo\", \"article\", "
        .. "\"tree\" or \"json\" expected)")
    end)
  end)

  describe("golden", function()
    -- what the seed article shows, renumbered: sh1 then sh2
    local ARTICLE = [[
1 8 0:1 / / rw,relatime
2 1 0:2 / /X rw,relatime shared:1
3 1 0:3 / /Y rw,relatime shared:2
4 1 0:2 / /Z rw,relatime shared:1

5 9 0:1 / / rw,relatime
6 5 0:2 / /X rw,relatime shared:1
7 5 0:3 / /Y rw,relatime shared:2
]]

    it("passes on the article's tables, run after run", function()
      local r = runs("article", "article")
      assert.are.equal(ARTICLE, mountns.golden(ARTICLE, r[1][1], r[1][2]))
      assert.are.equal(ARTICLE, mountns.golden(ARTICLE, r[2][1], r[2][2]))
      -- trailing blanks and newlines do not count
      mountns.golden(ARTICLE:gsub("\n", "  \n") .. "\n\n", r[1][1], r[1][2])
    end)

    it("fails with a unified diff when a peer is missing", function()
      local r = runs("z-private")[1]
      local ok, err = pcall(function() mountns.golden(ARTICLE, r[1], r[2]) end)
      assert.is_false(ok)
      assert.truthy(err:find("golden: mount tables differ (- expected, + got):\n"
        .. "--- expected\n+++ got\n@@ -1,7 +1,7 @@\n", 1, true))
      assert.truthy(err:find("\n-4 1 0:2 / /Z rw,relatime shared:1\n"
        .. "+4 1 0:2 / /Z rw,relatime\n", 1, true))
      assert.truthy(err:find("\nthe whole normalised text:\n1 8 0:1 / / rw,relatime\n", 1, true))
      -- the error points at the caller
      assert.truthy(err:match("^[^\n]*06%-format_spec%.lua:%d+: golden"))
    end)

    it("accepts namespaces (objects with :mounts()) and checks its arguments", function()
      local same = isolate(function()
        local keep = {}
        helper.sandbox()
        assert(core.pin_proc())
        article("article", keep)
        local function ns(h)
          return { mounts = function() assert(h:enter()); return assert(mountns.mountinfo()) end }
        end
        return mountns.golden(ARTICLE, ns(keep[1]), ns(keep[2]))
      end)
      assert.are.equal(ARTICLE, same)
      assert.has_error(function() mountns.golden(ARTICLE) end)
      assert.has_error(function() mountns.golden(nil, {}) end)
    end)

    it("works on scenario namespaces", function()
      local got = mountns.scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
        local sh2 = sh1:unshare { propagation = "slave" }
        return mountns.golden([[
1 5 0:1 / / rw,relatime
2 1 0:2 / /X rw,relatime shared:1

3 6 0:1 / / rw,relatime
4 3 0:2 / /X rw,relatime master:1
]], sh1, sh2)
      end)
      assert.truthy(got:find("master:1\n$"))
    end)
  end)

  describe("dot", function()
    -- node name of the mount at target in the i-th namespace of a picture
    local function node(i, t, target)
      return "ns" .. i .. "_m" .. find(t, target).id
    end

    -- attributes of a node statement: name -> attribute string
    local function node_attrs(dot, name)
      return dot:match("\n +" .. name .. " %[([^\n]*)%];\n")
    end

    local function fill(dot, name)
      return (node_attrs(dot, name) or ""):match('fillcolor="([^"]*)"')
    end

    -- undirected peer edges of group g, as a set of "a b"
    local function peer_edges(dot, g)
      local out = {}
      for a, b in dot:gmatch("\n +([%w_]+) %-> ([%w_]+) %[dir=\"none\"[^\n]*class=\"peer "
          .. "peer%-group%-" .. g .. "\"%];") do
        out[#out + 1] = a .. " " .. b
      end
      return out
    end

    -- the pictures, made in the child from namespace objects
    local function pictures(variant)
      return isolate(function()
        local keep = {}
        helper.sandbox()
        assert(core.pin_proc())
        local r = article(variant, keep)
        local function ns(h, label)
          return {
            mounts = function() assert(h:enter()); return assert(mountns.mountinfo()) end,
            id = function() return h:id() end,
            label = function() return label end,
          }
        end
        return mountns.dot(ns(keep[1], "sh1"), ns(keep[2], "sh2")), r
      end)
    end

    -- Graphviz's verdict, in a child with a tmpfs /tmp: no file on the host
    local function render(dot)
      return isolate(function()
        local base = helper.sandbox()
        local f = assert(io.open(base .. "/g.dot", "w"))
        f:write(dot)
        f:close()
        return helper.sh("dot -Tsvg " .. base .. "/g.dot 2>&1; echo \"rc=$?\"")
      end)
    end
    local has_dot = helper.sh("command -v dot") ~= ""

    it("draws the article: clusters, peer groups across namespaces", function()
      local dot, r = pictures("article")
      local t1, t2 = r[1], r[2]
      assert.truthy(dot:match("^digraph mountns {\n"))
      assert.truthy(dot:find('subgraph cluster_1 {\n    label="sh1 mnt:[' .. r.ids[1] .. ']";',
        1, true))
      assert.truthy(dot:find('subgraph cluster_2 {\n    label="sh2 mnt:[' .. r.ids[2] .. ']";',
        1, true))
      -- one node per mount, inside its cluster, with mount point, ID, propagation
      local c1 = dot:match("subgraph cluster_1 {(.-)\n  }")
      local c2 = dot:match("subgraph cluster_2 {(.-)\n  }")
      for _, m in ipairs(t1) do
        assert.truthy(c1:find("ns1_m" .. m.id .. " [label=\"" .. m.target .. "\\n#" .. m.id,
          1, true))
      end
      assert.truthy(c1:find('label="/X\\n#' .. find(t1, "/X").id .. " shared:"
        .. find(t1, "/X").shared .. '"', 1, true))
      assert.truthy(c1:find('label="/\\n#' .. find(t1, "/").id .. ' private"', 1, true))
      assert.truthy(c2:find(node(2, t2, "/") .. " -> " .. node(2, t2, "/Y"), 1, true))
      assert.is_nil(c2:find("/Z", 1, true))
      -- peer group of /X: sh1's /X and /Z and sh2's /X, one colour, chained
      local gx, gy = find(t1, "/X").shared, find(t1, "/Y").shared
      local xs = { node(1, t1, "/X"), node(1, t1, "/Z"), node(2, t2, "/X") }
      for _, n in ipairs(xs) do
        assert.are.equal(fill(dot, xs[1]), fill(dot, n))
        assert.truthy(node_attrs(dot, n):find('class="peer-group-' .. gx .. '"', 1, true))
      end
      assert.are.same({ xs[1] .. " " .. xs[2], xs[2] .. " " .. xs[3] }, peer_edges(dot, gx))
      assert.are.same({ node(1, t1, "/Y") .. " " .. node(2, t2, "/Y") }, peer_edges(dot, gy))
      assert.are_not.equal(fill(dot, xs[1]), fill(dot, node(1, t1, "/Y")))
      assert.is_nil(fill(dot, node(1, t1, "/")))
      assert.is_nil(dot:find("slave", 1, true))
      -- plain tables: a name field labels one; the same input, the same text
      local named = mountns.table.new(t1)
      named.name = "sh1"
      local plain = mountns.dot(named, t2)
      assert.truthy(plain:find('subgraph cluster_1 {\n    label="sh1";', 1, true))
      assert.truthy(plain:find('subgraph cluster_2 {\n    label="ns2";', 1, true))
      assert.are.equal(plain, mountns.dot(named, t2))
    end)

    it("draws the slave scenario: master -> slave edges from a group member", function()
      local dot, r = pictures("slave")
      local t1, t2 = r[1], r[2]
      for _, p in ipairs { "/X", "/Y" } do
        local g = find(t1, p).shared
        assert.are.equal(g, find(t2, p).master)
        local slave = node(2, t2, p)
        local edge = dot:match("\n  ([%w_]+) %-> " .. slave .. " %[style=\"bold\"[^\n]*"
          .. "class=\"slave slave%-of%-" .. g .. "\"%];")
        -- from a member of the master group (in sh1), to sh2's slave copy
        assert.truthy(edge)
        assert.truthy(node_attrs(dot, edge):find('class="peer-group-' .. g .. '"', 1, true))
        assert.truthy(node_attrs(dot, slave):find('class="slave-of-' .. g .. '"', 1, true))
        assert.truthy(node_attrs(dot, slave):find(" master:" .. g .. '"', 1, true))
        -- a slave is no member: no fill of the group, no peer edge to it
        assert.is_nil(fill(dot, slave))
        for line in dot:gmatch("[^\n]+") do
          if line:find('dir="none"', 1, true) then
            assert.is_nil((" " .. line .. " "):find("[^%w_]" .. slave .. "[^%w_]"), line)
          end
        end
      end
      -- /Z stays in sh1: peer group of /X is /X and /Z there, one edge
      local gx = find(t1, "/X").shared
      assert.are.same({ node(1, t1, "/X") .. " " .. node(1, t1, "/Z") }, peer_edges(dot, gx))
    end)

    it("a master outside the picture gets a node of its own; normalize option", function()
      local _, r = pictures("slave")
      local dot = mountns.dot(mountns.table.new(r[2]), { normalize = true, title = "sh2 alone" })
      assert.truthy(dot:find('  label="sh2 alone";', 1, true))
      assert.truthy(dot:find('group_1 [label="peer group 1\\n(not shown)"', 1, true))
      assert.truthy(dot:find("group_1 -> ns1_m2 [style=\"bold\"", 1, true))
      assert.truthy(dot:find("group_2 -> ns1_m3 [style=\"bold\"", 1, true))
      -- normalised pictures of two runs are the same text
      local _, r2 = pictures("slave")
      assert.are.equal(dot, mountns.dot(mountns.table.new(r2[2]),
                                        { normalize = true, title = "sh2 alone" }))
      assert.has_error(function() mountns.dot(r[1], "x") end,
        "bad argument #2 to 'dot' (namespace or mount table expected, got string)")
    end)

    it("renders with Graphviz: dot -Tsvg accepts both pictures", function()
      if not has_dot then
        pending("graphviz (dot) is not installed")
        return
      end
      for _, variant in ipairs { "article", "slave" } do
        local dot = pictures(variant)
        local out = render(dot)
        assert.truthy(out:match("rc=0$"), out)
        assert.truthy(out:find("<svg", 1, true))
        assert.truthy(out:find('class="node peer&#45;group&#45;', 1, true))
        assert.is_nil(out:lower():find("warning", 1, true), out)
      end
      -- no namespace at all is an empty picture, still valid
      local out = render(mountns.dot())
      assert.truthy(out:match("rc=0$"), out)
    end)
  end)
end)

-- format(t, "json") as it was written in Lua before the JSON moved into C
-- (csrc/tree.c json_text): the reference the C renderer must match byte
-- for byte.
local function lua_json(t)
  local function json_string(s)
    return '"' .. core.escape(s):gsub('["\\]', "\\%0") .. '"'
  end
  local function json_value(v)
    local ty = type(v)
    if ty == "string" then return json_string(v) end
    if ty == "boolean" then return tostring(v) end
    if ty == "number" then
      if v ~= v or v == math.huge or v == -math.huge then return "null" end
      if v == math.floor(v) and v > -2^63 and v < 2^63 then
        return string.format("%d", v)
      end
      return string.format("%.17g", v)
    end
    return "null"
  end
  local rows = {}
  for i, m in ipairs(t) do
    local kv = {}
    for _, f in ipairs(require("mountns.record").FIELDS) do
      local v = m[f]
      if v ~= nil then kv[#kv + 1] = '"' .. f .. '":' .. json_value(v) end
    end
    rows[i] = "{" .. table.concat(kv, ",") .. "}"
  end
  return '{"mounts":[' .. table.concat(rows, ",\n") .. "]}\n"
end

describe("format json (rendered in C)", function()
  -- mount points no shell quoting survives: newline, ESC, bytes that are
  -- not UTF-8, a C1 control, backslash, quotes, a space, and UTF-8 kept
  local NAMES = { "/new\nline", "/esc\27[31m", "/bad\255\254", "/c1\194\133",
                  "/back\\slash", '/quo"te"', "/a b", "/utf-\195\188", "/del\127" }

  it("gives the bytes the Lua renderer gave, for mountinfo and statmount tables", function()
    local r = isolate(function()
      assert(core.pin_proc())
      fresh_root()
      assert(mountns.mkdir("/d"))
      assert(mountns.mount("src\n\"x\"\\", "/d", "tmpfs"))
      assert(mountns.mkdir("/d/sub"))
      assert(mountns.make_shared("/d"))
      for _, n in ipairs(NAMES) do
        assert(mountns.mkdir(n))
        assert(mountns.bind("/d/sub", n)) -- root /sub, shared with /d
      end
      local out = {}
      for _, name in ipairs { "mountinfo", "mounts" } do
        local t = assert(mountns[name]())
        out[name] = { c = core.json_text(t), format = mountns.format(t, "json"),
                      lua = lua_json(t), n = #t }
      end
      return out
    end)
    for _, name in ipairs { "mountinfo", "mounts" } do
      local o = r[name]
      assert.are.equal(#NAMES + 2, o.n)
      assert.are.equal(o.lua, o.c)
      assert.are.equal(o.lua, o.format)
      -- the kernel's names are there, escaped once by the rule, then JSON
      assert.truthy(o.c:find('"target":"/new\\\\012line"', 1, true))
      assert.truthy(o.c:find('"target":"/esc\\\\033[31m"', 1, true))
      assert.truthy(o.c:find('"target":"/bad\\\\377\\\\376"', 1, true))
      assert.truthy(o.c:find('"target":"/c1\\\\302\\\\205"', 1, true))
      assert.truthy(o.c:find('"target":"/back\\\\134slash"', 1, true))
      assert.truthy(o.c:find('"target":"/quo\\"te\\""', 1, true))
      assert.truthy(o.c:find('"target":"/utf-\195\188"', 1, true))
      assert.truthy(o.c:find('"source":"src\\\\012\\"x\\"\\\\134"', 1, true))
      assert.truthy(o.c:find('"root":"/sub"', 1, true))
    end
  end)

  it("show and show --json print tostring and format json of mountinfo()", function()
    -- show reads the table from statmount where that gives every field:
    -- the same text as libmount's parse of mountinfo, crafted names and
    -- propagation (shared, slave, propagate_from, unbindable) included
    local r = isolate(function()
      local base = helper.sandbox()
      helper.propagation_kinds(base)
      for _, n in ipairs(NAMES) do
        assert(mountns.mkdir(base .. n))
        assert(mountns.bind(base .. "/sh", base .. n))
      end
      -- a slave whose master is out of this namespace's reach under a
      -- chroot gives propagate_from; here: a bind of a subdirectory
      assert(mountns.mkdir(base .. "/sh/sub"))
      assert(mountns.mkdir(base .. "/subbind"))
      assert(mountns.bind(base .. "/sh/sub", base .. "/subbind"))
      local cmd = "cd " .. helper.ROOT .. " && " .. helper.lua_vars() .. " bin/mountns show"
      local t = assert(mountns.mountinfo())
      return { show = helper.sh(cmd) .. "\n", json = helper.sh(cmd .. " --json") .. "\n",
               tree = tostring(t), format = mountns.format(t, "json"), n = #t }
    end)
    assert.is_true(r.n > #NAMES + 6)
    assert.are.equal(r.tree, r.show)
    assert.are.equal(r.format, r.json)
  end)

  it("gives the bytes the Lua renderer gave for any field value", function()
    local big = 2^53
    local t = {
      { id = 1, parent_id = 0, major = 1.5, minor = 1e300, root = "", target = "/",
        unique_id = 99, other = "x", unbindable = true },
      { id = 0 / 0, parent_id = math.huge, major = -math.huge, minor = -0.0,
        root = {}, target = "\0\1\31 ~", options = print, fstype = big,
        shared = -big, master = 2^63, propagate_from = -2^63, unbindable = false },
      {},
      { id = math.maxinteger or 2^62, parent_id = math.mininteger or -2^62,
        propagation = "shared,slave", super_options = "\237\160\128\244\144\128\128" },
    }
    assert.are.equal(lua_json(t), core.json_text(t))
    assert.are.equal(lua_json(t), mountns.format(t, "json"))
    assert.are.equal('{"mounts":[]}\n', core.json_text({}))
    assert.are.equal('{"mounts":[]}\n', mountns.format({}, "json"))
    -- an entry that is no record is an error, as in tostring
    assert.has_error(function() core.json_text({ {}, 7 }) end,
      "mount table entry 2 is not a record")
  end)
end)
