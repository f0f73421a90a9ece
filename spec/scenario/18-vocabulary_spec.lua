-- The vocabulary real scenarios need (issue 12): which mount (fields,
-- stacks, records below the top, propagate_from, mountinfo order),
-- subtrees and counts, golden tables from kernel lines. Each assertion is
-- run against the real kernel inside a scenario, passing and failing, and
-- its diagnostic is checked outside.
local mountns = require "mountns"
local expect = require "mountns.expect"
local format = require "mountns.format"
local helper = require "helper"
-- modules a scenario uses are loaded before it starts: its / is a new tmpfs
require "mountns.luassert"

local scenario = mountns.scenario

-- The error a call raises (nil when it returns).
local function raised(fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then return nil end
  return tostring(err)
end

-- The lines of a text that mark a mount (">> ").
local function marked(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    if line:match("^  >> ") then out[#out + 1] = line end
  end
  return out
end

describe("vocabulary", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  describe("say which mount", function()
    it("mounted with fields: source, fstype, root, options, parent", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("sda3", "/X", "tmpfs", "nosuid", "size=1m")
        sh1:mkdir("/X/sub"); sh1:mkdir("/Z"); sh1:bind("/X/sub", "/Z")
        expect.mounted(sh1, "/X", { source = "sda3", fstype = "tmpfs", root = "/",
                                    options = "nosuid,size=1024k", parent = "/" })
        expect.mounted(sh1, "/Z", { source = "sda3", root = "/sub", options = { "rw" } })
        expect.not_mounted(sh1, "/Z", { root = "/" })
        assert.mounted(sh1, "/X", { fstype = "tmpfs" })
        assert.is_not.mounted(sh1, "/X", { fstype = "ext4" })
        return {
          source = raised(expect.mounted, sh1, "/X", { source = "sda5", options = "ro" }),
          parent = raised(expect.mounted, sh1, "/Z", { parent = "/X" }),
          missing = raised(expect.mounted, sh1, "/nope", { source = "sda3" }),
          bad_key = raised(function() expect.mounted(sh1, "/X", { sorce = "x" }) end),
          ro_super = raised(expect.mounted, sh1, "/X", { options = "ro" }),
          tree = tostring(sh1:mounts()),
        }
      end)
      assert.matches("expected a mount at /X in ns1 mnt:%[%d+%] with source=sda5 "
        .. "options=ro: its source is sda3, not sda5; its options [^ ]+ %([^)]*%) lack ro",
        r.source)
      assert.matches("its parent is mount %d+, not /X %(mount %d+%)", r.parent)
      assert.matches("expected a mount at /nope in ns1", r.missing)
      assert.matches("18%-vocabulary_spec.lua:%d+: bad argument #3 to 'mounted' "
        .. "%(unknown option 'sorce'%)", r.bad_key)
      assert.matches("lack ro", r.ro_super) -- rw mount: ro is read from its options
      -- a bind of a subdirectory: tostring shows a ROOT column, /sub
      assert.matches("^TARGET +SOURCE +ROOT +FSTYPE", r.tree)
      assert.matches("\n└─/Z +sda3 +/sub +tmpfs", r.tree)
    end)

    it("stack: the mounts at a path, bottom to top, by source", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("srcA", "/X", "tmpfs")
        sh1:mount("srcB", "/X", "tmpfs"); sh1:mount("srcC", "/X", "tmpfs")
        sh1:umount("/X") -- srcC goes: A, B
        sh1:mount("srcC", "/X", "tmpfs")
        expect.stack(sh1, "/X", { "srcA", "srcB", "srcC" })
        assert.stack(sh1, "/X", { "srcA", "srcB", "srcC" })
        assert.is_not.stack(sh1, "/X", { "srcA", "srcC" })
        expect.stack(sh1, "/nothing", {})
        return { wrong = raised(expect.stack, sh1, "/X/", { "srcA", "srcC" }) }
      end)
      assert.matches("expected the stack at /X in ns1 mnt:%[%d+%] to be, bottom to top: "
        .. "srcA, srcC; it is: srcA, srcB, srcC", r.wrong)
      -- a stack prints its SOURCE column, each layer marked
      assert.matches("TARGET +SOURCE +ID PARENT", r.wrong)
      assert.are.equal(3, #marked(r.wrong))
    end)

    it("a record names a mount below the top of a stack", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("low", "/X", "tmpfs"); sh1:make_shared("/X")
        sh1:mkdir("/P"); sh1:bind("/X", "/P")            -- P: a peer of low
        -- top propagates to /P too (a new group), then /X's top goes private
        sh1:mount("top", "/X", "tmpfs"); sh1:make_private("/X")
        local low, plow = sh1:mounts():stack("/X")[1], sh1:mounts():stack("/P")[1]
        expect.propagation(sh1, "/X", "private")
        expect.propagation(sh1, low, "shared")
        expect.peers({ sh1, low }, { sh1, plow })
        assert.peers({ sh1, low }, { sh1, plow })
        expect.not_peers({ sh1, low }, { sh1, "/P" })
        expect.not_peers({ sh1, "/X" }, { sh1, "/P" })
        local sh2 = sh1:unshare { propagation = "slave" }
        expect.slave_of({ sh2, sh2:mounts():stack("/X")[1] }, { sh1, low })
        assert.is_not.slave_of({ sh2, "/X" }, { sh1, low })
        expect.mounted(sh1, low, { source = "low" })
        local gone = sh1:mounts():find("/X")
        local top = raised(expect.peers, { sh1, "/X" }, { sh1, "/P" })
        -- the unmount propagates through the parent's peer group (/X's
        -- low, /P's low): /P's top goes too, though /X's top is private
        sh1:umount("/X")
        expect.stack(sh1, "/P", { "low" })
        return {
          top = top,
          gone = raised(expect.propagation, sh1, gone, "private"),
          bad = raised(expect.peers, { sh1, { id = 1 } }, { sh1, "/P" }),
          low_id = low.id,
        }
      end)
      assert.matches("expected one peer group: /X in ns1 mnt:%[%d+%] %(private%), /P", r.top)
      assert.matches("expected /X %(mount ID %d+%) in ns1 mnt:%[%d+%] to be private, it is "
        .. "%(not mounted%)", r.gone)
      assert.matches("bad argument #1 to 'peers' %(expected {ns, path} or {ns, record}%)", r.bad)
    end)

    it("propagate_from, and propagation's master/propagate_from details", function()
      -- sharedsubtree's slave of a slave: B's /Y is a slave of A's /X and
      -- shared (g2); C's /Y a slave of g2, whose peers are all in B: C
      -- sees propagate_from g1, A's /X.
      local r = scenario(function(A)
        A:mkdir("/X"); A:mount("g1", "/X", "tmpfs"); A:make_shared("/X")
        local B = A:unshare { propagation = "unchanged", label = "B" }
        B:mkdir("/Y"); B:bind("/X", "/Y"); B:make_slave("/Y"); B:make_shared("/Y")
        local C = B:unshare { propagation = "unchanged", label = "C" }
        C:make_slave("/Y")
        expect.propagate_from({ C, "/Y" }, { A, "/X" })
        assert.propagate_from({ C, "/Y" }, { A, "/X" })
        assert.is_not.propagate_from({ C, "/Y" }, { B, "/Y" })
        expect.propagation(C, "/Y", "slave", { master = { B, "/Y" }, propagate_from = { A, "/X" } })
        expect.propagation(B, "/Y", "shared,slave", { master = { A, "/X" } })
        return {
          from = raised(expect.propagate_from, { C, "/Y" }, { B, "/Y" }),
          master = raised(expect.propagation, C, "/Y", "slave", { master = { A, "/X" } }),
          not_shared = raised(expect.propagation, C, "/Y", "slave", { master = { C, "/" } }),
          tree = tostring(C:mounts { propagate_from = true }),
        }
      end, { label = "A" })
      assert.matches("expected /Y in C mnt:%[%d+%] to receive propagation from /Y in B "
        .. "mnt:%[%d+%]'s peer group %(its propagate_from: %d+, its master: %d+, the group: "
        .. "%d+%)", r.from)
      -- the diagnostic has the PROPAGATE_FROM column (C's table)
      assert.matches("GROUPS +PROPAGATE_FROM", r.from)
      assert.matches("expected /Y in C mnt:%[%d+%] to be slave with master /X in A "
        .. "mnt:%[%d+%]'s peer group %(shared:%d+%) %(its master: %d+%), it is slave", r.master)
      assert.matches("%(not shared%)", r.not_shared)
      assert.matches("MASTER PROPAGATE_FROM\n", r.tree)
    end)

    it("order: mounts in mountinfo order (rbind keeps the tree's order)", function()
      local r = scenario(function(sh1)
        for _, d in ipairs { "/a", "/b", "/c" } do sh1:mkdir(d) end
        sh1:mount("a", "/a", "tmpfs"); sh1:mkdir("/a/1"); sh1:mount("a1", "/a/1", "tmpfs")
        sh1:mount("b", "/b", "tmpfs")
        sh1:bind("/a", "/c", { recursive = true })
        expect.order(sh1, { "/a", "/a/1", "/b", "/c", "/c/1" })
        assert.order(sh1, { "/b", "/c/1" })
        assert.is_not.order(sh1, { "/c/1", "/c" })
        return {
          wrong = raised(expect.order, sh1, { "/b", "/a" }),
          missing = raised(expect.order, sh1, { "/a", "/nope" }),
        }
      end)
      assert.matches("expected /b, /a in ns1 mnt:%[%d+%] in this order %(mountinfo order%); "
        .. "the table lists them /b %(4th%), /a %(2nd%)", r.wrong)
      assert.matches("/nope %(absent%) %-%- but nothing is mounted at /nope", r.missing)
    end)

    it("fails shows the tables of the namespaces it was about", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/U"); sh1:mount("u", "/U", "tmpfs"); sh1:make_unbindable("/U")
        sh1:mkdir("/copy")
        local msg = expect.fails("EINVAL", sh1.bind, sh1, "/U", "/copy")
        assert.fails("EINVAL", sh1.bind, sh1, "/U", "/copy")
        assert.is_not.fails("EINVAL", sh1.mkdir, sh1, "/fine")
        return {
          msg = msg,
          args = raised(expect.fails, "ENOENT", sh1.bind, sh1, "/U", "/copy"),
          closure = raised(expect.fails, "EINVAL", function() sh1:mkdir("/ok") end),
        }
      end)
      assert.matches("^bind /U /copy: Invalid argument %(EINVAL%)", r.msg)
      assert.matches("^expected an error naming ENOENT, got: bind /U /copy: .*%(EINVAL%)\n"
        .. "  ns1 mnt:%[%d+%]:\n", r.args)
      assert.are.equal(1, #marked(r.args)) -- /U (/copy is no mount point)
      assert.matches("but the call succeeded\n  ns1 mnt:%[%d+%]:\n", r.closure)
    end)

    it("tostring has no ROOT or PROPAGATE_FROM column when no record needs one", function()
      local t = assert(mountns.parse_mountinfo("1 0 0:1 / / rw - tmpfs r rw\n"
        .. "2 1 0:2 / /X rw master:3 - tmpfs a rw\n"))
      assert.matches("^TARGET +SOURCE +FSTYPE +ID PARENT PROPAGATION +GROUP MASTER\n",
        tostring(t))
      t = assert(mountns.parse_mountinfo("1 0 0:1 / / rw - tmpfs r rw\n"
        .. "2 1 0:2 /a\\nb /X rw master:3 propagate_from:4 - tmpfs a rw\n"))
      local text = tostring(t)
      assert.matches("^TARGET +SOURCE +ROOT +FSTYPE +ID PARENT PROPAGATION +GROUP MASTER "
        .. "PROPAGATE_FROM\n", text)
      -- the root is escaped like every field (tree.c's rule)
      assert.matches("\n└─/X +a +/a\\134nb +tmpfs +2 +1 slave +3 +4\n", text)
    end)

    it("the golden article form shows the source when asked", function()
      local text, plain = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("A", "/X", "tmpfs"); sh1:mount("B", "/X", "tmpfs")
        expect.golden(format.golden_text(sh1, { source = true }), sh1, { source = true })
        return format.golden_text(sh1, { source = true }), format.golden_text(sh1)
      end)
      assert.are.equal("1 4 0:1 / / rw,relatime - mountns\n"
        .. "2 1 0:2 / /X rw,relatime - A\n3 2 0:3 / /X rw,relatime - B\n", text)
      assert.are.equal(text:gsub(" %- %w+\n", "\n"), plain)
      assert.has_error(function() format.format({}, "tree", { source = true }) end,
        "bad argument #3 to 'format' (option 'source' is for the \"article\" style "
        .. "(the tree style shows the source anyway))")
    end)
  end)

  describe("files", function()
    it("exists: a symlink counts as itself (dangling too), a path through a file or "
      .. "a missing one does not; the same answers as lstat's, in the namespace the "
      .. "process is in, another one, an agent's", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/d"); sh1:write("/d/f", "x")
        sh1:symlink("/nowhere", "/d/dangling"); sh1:symlink("f", "/d/link")
        local other = sh1:unshare()
        local u = sh1:unshare { user = true }
        local paths = { "/d", "/d/f", "/d/dangling", "/d/link", "/d/f/x", "/nope",
                        "/d/dangling/x", "d" }
        local out = {}
        for _, ns in ipairs { sh1, other, u } do
          local got = {}
          for i, p in ipairs(paths) do got[i] = ns:exists(p) end
          out[#out + 1] = got
        end
        return out
      end)
      local want = { true, true, true, true, false, false, false, true } -- "d": from /
      assert.are.same({ want, want, want }, r)
    end)

    it("write, read, exists, ls act in the namespace, through its agent too", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/mnt"); sh1:mount("m", "/mnt", "tmpfs"); sh1:make_shared("/mnt")
        local priv = sh1:unshare { propagation = "private" }
        sh1:write("/mnt/b", "bee"); sh1:write("/mnt/a", "")
        priv:mount("other", "/mnt", "tmpfs")       -- priv sees another tmpfs there
        priv:write("/mnt/p", "private")
        local u = sh1:unshare { user = true, propagation = "unchanged" }
        u:write("/mnt/u", "from the user namespace")
        return {
          ls1 = sh1:ls("/mnt"), ls2 = priv:ls("/mnt"), read = sh1:read("/mnt/u"),
          a = sh1:read("/mnt/a"), exists = { sh1:exists("/mnt/p"), priv:exists("/mnt/p"),
                                             u:exists("/mnt/b"), sh1:exists("/nope/x") },
          uls = u:ls("/mnt"),
          noent = raised(function() sh1:read("/mnt/p") end),
          isdir = raised(function() sh1:read("/mnt") end),
          nodir = raised(function() sh1:ls("/mnt/nope") end),
          nowrite = raised(function() u:write("/nope/f", "x") end),
          badtext = raised(function() sh1:write("/mnt/x", 7) end),
        }
      end)
      assert.are.same({ "a", "b", "u" }, r.ls1)
      assert.are.same({ "p" }, r.ls2)
      assert.are.same({ "a", "b", "u" }, r.uls)
      assert.are.equal("from the user namespace", r.read)
      assert.are.equal("", r.a)
      assert.are.same({ false, true, true, false }, r.exists)
      assert.matches("18%-vocabulary_spec.lua:%d+: read /mnt/p: No such file or directory "
        .. "%(ENOENT%)$", r.noent)
      assert.matches("read /mnt: Is a directory %(EISDIR%)$", r.isdir)
      assert.matches("readdir /mnt/nope: No such file or directory %(ENOENT%)$", r.nodir)
      assert.matches("18%-vocabulary_spec.lua:%d+: write /nope/f: No such file or directory "
        .. "%(ENOENT%)$", r.nowrite)
      assert.matches("bad argument #2 to 'ns:write' %(string expected, got number%)", r.badtext)
    end)
  end)

  describe("other roots and raw calls", function()
    it("mounts{root} and find{root}: the table a chrooted process sees", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
        sh1:mkdir("/jail"); sh1:mount("jail", "/jail", "tmpfs")
        sh1:mkdir("/jail/X"); sh1:bind("/X", "/jail/X"); sh1:make_slave("/jail/X")
        sh1:mkdir("/X/sub"); sh1:mkdir("/jail/Y"); sh1:bind("/X/sub", "/jail/Y")
        sh1:make_slave("/jail/Y"); sh1:make_private("/X")
        local outside = sh1:mounts { propagate_from = true }
        local inside = sh1:mounts { root = "/jail", propagate_from = true }
        local targets = {}
        for i, m in ipairs(inside) do targets[i] = m.target end
        return {
          targets = targets,
          find = sh1:find("/X", { root = "/jail" }).source,
          y_out = outside:find("/jail/Y").master, y_in = inside:find("/Y").master,
          none = sh1:find("/X/sub", { root = "/jail" }),
          bad = raised(function() sh1:mounts { root = "jail" } end),
          missing = select(2, sh1:mounts { root = "/nope" }),
        }
      end)
      -- only the mounts under /jail, with paths from there
      assert.are.same({ "/", "/X", "/Y" }, r.targets)
      assert.are.equal("x", r.find)
      assert.is_nil(r.none)
      assert.are.equal(r.y_out, r.y_in)
      assert.matches("bad argument #1 to 'ns:mounts' %(absolute path expected", r.bad)
      assert.matches("chroot /nope: No such file or directory %(ENOENT%)", r.missing)
    end)

    it("pivot_root keeps the old root at put_old", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/new"); sh1:mount("new", "/new", "tmpfs"); sh1:mkdir("/new/old")
        sh1:write("/new/hello", "hi")
        local p = sh1:unshare()
        p:pivot_root("/new", { put_old = "/old" })
        local t = p:mounts()
        return { root = t:find("/").source, old = t:find("/old").source,
                 hello = p:read("/hello"), ls = p:ls("/old"),
                 missing = raised(function() sh1:unshare():pivot_root("/new",
                   { put_old = "/nope" }) end),
                 key = raised(function() p:pivot_root("/", { putold = "/x" }) end) }
      end)
      assert.are.equal("new", r.root)
      assert.are.equal("mountns", r.old)
      assert.are.equal("hi", r.hello)
      assert.are.same({ "new" }, r.ls)
      assert.matches("pivot_root %. %./nope: No such file or directory %(ENOENT%)", r.missing)
      assert.matches("bad argument #2 to 'ns:pivot_root' %(unknown option 'putold'%)", r.key)
    end)

    it("propagation names and mountns.MS reach mount(2) as given", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs")
        -- two propagation types at once: the kernel refuses (EINVAL)
        local both = expect.fails("EINVAL", sh1.mount, sh1, "none", "/X", nil,
          { "shared", "private" })
        expect.fails("EINVAL", sh1.mount, sh1, "none", "/X", nil,
          { mountns.MS.SHARED, mountns.MS.SLAVE })
        sh1:mount("none", "/X", nil, "shared")               -- mount --make-shared
        expect.propagation(sh1, "/X", "shared")
        sh1:mkdir("/Y")
        sh1:mount("/X", "/Y", nil, { mountns.MS.BIND, mountns.MS.REC }) -- --rbind
        expect.peers({ sh1, "/X" }, { sh1, "/Y" })
        sh1:mount("none", "/Y", nil, mountns.MS.PRIVATE)     -- an integer alone
        expect.propagation(sh1, "/Y", "private")
        return both, mountns.MS.SHARED, mountns.MS.REC
      end)
      assert.are.equal("mount none /X: Invalid argument (EINVAL)", r)
    end)
  end)

  describe("mountns run --golden", function()
    it("prints each passing scenario's golden text, ready to paste", function()
      local script = os.tmpname()
      local f = assert(io.open(script, "w"))
      f:write([[
local mountns = require "mountns"
mountns.scenario("two", function(sh1)
  sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:unshare { propagation = "slave" }
end)
mountns.scenario("fails", function() error("no") end)
]])
      f:close()
      local out = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
        .. " bin/mountns run --golden " .. script .. " 2>&1; echo \"exit=$?\"")
      local tap = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
        .. " bin/mountns run --golden --tap " .. script .. " 2>&1")
      os.remove(script)
      local golden = "    1 5 0:1 / / rw,relatime\n    2 1 0:2 / /X rw,relatime shared:1\n\n"
        .. "    3 6 0:1 / / rw,relatime\n    4 3 0:2 / /X rw,relatime master:1\n"
      assert.truthy(out:find("^ok   two %(%d+ ms%)\n" .. golden:gsub("%p", "%%%0")
        .. "ERROR fails"), out)
      assert.truthy(out:find("1 passed, 1 failed (1 ERROR)\nexit=1", 1, true), out)
      assert.truthy(tap:find("\nok 1 %- two\n# 1 5 0:1 / / rw,relatime\n.*\n#\n# 3 6 0:1"), tap)
      -- the printed text, indented as it is, is a golden text
      local same = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("y", "/X", "tmpfs"); sh1:make_shared("/X")
        local sh2 = sh1:unshare { propagation = "slave" }
        return expect.golden(golden, sh1, sh2)
      end)
      assert.truthy(same:find("^1 5 0:1 / / rw,relatime\n"))
    end)
  end)

  describe("subtrees and counts", function()
    it("under and count: sharedsubtree's explosion 3 -> 6 -> 12 -> 24", function()
      local counts, under, fail = scenario(function(sh1)
        sh1:mkdir("/mnt"); sh1:mount("mnt", "/mnt", "tmpfs"); sh1:make_shared("/mnt")
        for _, d in ipairs { "/mnt/a", "/tmp" } do sh1:mkdir(d) end
        sh1:mount("a", "/mnt/a", "tmpfs")
        sh1:mount("tmp", "/tmp", "tmpfs"); sh1:make_shared("/tmp")
        expect.count(sh1, "/mnt", 2)
        local out = {}
        for i = 1, 3 do
          sh1:mkdir("/tmp/" .. i)
          sh1:bind("/mnt", "/tmp/" .. i, { recursive = true })
          out[i] = #sh1:mounts():under("/tmp")
        end
        assert.count(sh1, "/tmp/1", 2)
        assert.is_not.count(sh1, "/tmp", 1)
        local t = sh1:mounts():under("/mnt")
        local targets = {}
        for i, m in ipairs(t) do targets[i] = m.target end
        return out, targets, raised(expect.count, sh1, "/mnt", 1)
      end)
      -- /tmp, then each rbind copies /mnt's two mounts: 3, 5, 7
      assert.are.same({ 3, 5, 7 }, counts)
      assert.are.same({ "/mnt", "/mnt/a" }, under)
      assert.matches("expected 1 mount at or below /mnt in ns1 mnt:%[%d+%], there are 2", fail)
      assert.are.equal(2, #marked(fail))
    end)

    it("under keeps tree order, stacks and hidden mounts", function()
      local t = assert(mountns.parse_mountinfo(table.concat({
        "1 0 0:1 / / rw - tmpfs r rw",
        "5 1 0:5 / /b rw - tmpfs b rw",
        "2 1 0:2 / /a rw - tmpfs a rw",
        "3 2 0:3 / /a/x rw - tmpfs ax rw",
        "4 2 0:4 / /a rw - tmpfs a2 rw",
        "6 1 0:6 / /ab rw - tmpfs ab rw",
      }, "\n") .. "\n"))
      local ids = {}
      for i, m in ipairs(t:under("/a/")) do ids[i] = m.id end
      assert.are.same({ 2, 3, 4 }, ids) -- not /ab; tree order
      assert.are.equal(6, #t:under("/"))
      assert.are.equal(0, #t:under("/nope"))
      assert.is_true(mountns.table.is(t:under("/a")))
      assert.has_error(function() t:under("rel") end,
        "bad argument #1 to 'under' (absolute path expected, got \"rel\")")
    end)
  end)

  describe("golden tables from kernel lines", function()
    -- the seed article's two tables as it printed them (sed 's/ - .*//'),
    -- under /tmp/W on the author's machine
    local pasted = [[
24 1 8:2 / /tmp/W rw,relatime shared:1
25 24 8:3 / /tmp/W/X rw,relatime shared:2
26 24 8:5 / /tmp/W/Y rw,relatime shared:3
27 24 8:3 / /tmp/W/Z rw,relatime shared:2
30 1 0:5 / /proc rw,relatime shared:9

31 29 8:2 / /tmp/W rw,relatime
32 31 8:3 / /tmp/W/X rw,relatime shared:2
33 31 8:5 / /tmp/W/Y rw,relatime shared:3
]]
    it("compares normalised tables with pasted lines, after a path rewrite", function()
      local r = scenario(function(sh1)
        sh1:make_shared("/")
        sh1:mkdir("/X"); sh1:mkdir("/Y")
        sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
        sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
        local sh2 = sh1:unshare { propagation = "unchanged" }
        sh2:make_private("/")
        sh1:mkdir("/Z"); sh1:bind("/X", "/Z")
        expect.golden_mountinfo(pasted, { ["/tmp/W"] = "/" }, sh1, sh2)
        assert.golden_mountinfo(pasted, { ["/tmp/W"] = "/" }, sh1, sh2)
        sh1:umount("/Z")
        assert.is_not.golden_mountinfo(pasted, { ["/tmp/W"] = "/" }, sh1, sh2)
        return {
          diff = raised(expect.golden_mountinfo, pasted, { ["/tmp/W"] = "/" }, sh1, sh2),
          blocks = raised(expect.golden_mountinfo, pasted, { ["/tmp/W"] = "/" }, sh1),
          norewrite = raised(expect.golden_mountinfo, pasted, sh1, sh2),
          bad = raised(expect.golden_mountinfo, pasted, { W = "/" }, sh1),
        }
      end)
      assert.matches("golden_mountinfo: mount tables differ %(%- pasted, %+ got%):\n"
        .. "%-%-%- pasted\n%+%+%+ got\n@@ ", r.diff)
      assert.matches("\n%-4 1 0:2 / /Z rw,relatime shared:2\n", r.diff)
      assert.matches("the text has 2 block%(s%) of lines, 1 namespace%(s%) given", r.blocks)
      -- without the rewrite, /proc and /tmp/W stay: a mismatch
      assert.matches("\n%-5 9 0:4 / /proc rw,relatime shared:4\n", r.norewrite)
      assert.matches("bad argument #2 to 'golden_mountinfo' %(a path rewrite", r.bad)
    end)

    it("full mountinfo lines work too, and text that is not mountinfo says so", function()
      local t = assert(mountns.parse_mountinfo("5 9 0:8 / / rw - tmpfs r rw\n"
          .. "6 5 0:9 / /X rw shared:2 - tmpfs a rw\n"))
      local ok, err = pcall(expect.golden_mountinfo,
        "1 0 0:1 / / rw - tmpfs r rw\n2 1 0:2 / /X rw shared:7 - tmpfs a rw\n", t)
      assert.is_true(ok, err)
      ok, err = pcall(expect.golden_mountinfo, "hello\n", t)
      assert.is_false(ok)
      assert.matches("'golden_mountinfo' %(block 1 of the text is not mountinfo: line 1", err)
    end)
  end)
end)
