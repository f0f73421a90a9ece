-- Answers that must not depend on the path taken (issue 11, issue 16):
-- propagate_from from statmount and from mountinfo, find on hidden mounts
-- and on kernels whose statmount lacks fields, lexical path normalisation,
-- and expect checks that name a mount which is not there.
local mountns = require "mountns"
local core = require "mountns.core"
local expect = require "mountns.expect"
local mtable = require "mountns.table"
local helper = require "helper"
-- modules a scenario uses are loaded before it starts: its / is a new tmpfs
local la = require "mountns.luassert"

local scenario = mountns.scenario

-- Every field of two records, as "key=value" lines, sorted: equal records
-- give equal lists, and a failure shows the field that differs.
local function fields(r)
  if r == nil then return nil end
  local out = {}
  for k, v in pairs(r) do out[#out + 1] = k .. "=" .. tostring(v) end
  table.sort(out)
  return out
end

-- id -> {master, propagate_from, shared} of every record of a table
local function propagation_of(t)
  local out = {}
  for _, m in ipairs(t) do
    out[m.id] = { tostring(m.master), tostring(m.propagate_from), tostring(m.shared) }
  end
  return out
end

-- The first error a function raises, or nil when it returns.
local function raised(fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then return nil end
  return tostring(err)
end

describe("answers that do not depend on the path taken", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  describe("mounts{propagate_from = true}", function()
    it("equals mountinfo in every namespace of a slave-of-slave chain", function()
      -- g1: /X in A, shared into B, C, D, E. g2: B's /Y, a slave of g1.
      -- C's /Y: a slave of g2, whose peers are all in B, so its
      -- propagate_from is g1 (C's /X). D makes its copy of /Y shared (g3,
      -- a slave of g2); E's /Y is a slave of g3: propagate_from g1 again,
      -- three masters up.
      local out, g1 = scenario(function(A)
        A:mkdir("/X"); A:mount("g1", "/X", "tmpfs"); A:make_shared("/X")
        local B = A:unshare { propagation = "unchanged", label = "B" }
        B:mkdir("/Y"); B:bind("/X", "/Y"); B:make_slave("/Y"); B:make_shared("/Y")
        local C = B:unshare { propagation = "unchanged", label = "C" }
        C:make_slave("/Y")
        local D = B:unshare { propagation = "unchanged", label = "D" }
        D:make_slave("/Y"); D:make_shared("/Y")
        local E = D:unshare { propagation = "unchanged", label = "E" }
        E:make_slave("/Y")
        local res = {}
        for _, ns in ipairs { A, B, C, D, E } do
          -- the scenario process stays in A: B..E are listed from outside
          -- them; mountinfo is read by the process after entering
          local mi = ns:run(function() return assert(mountns.mountinfo()) end)
          res[ns:label()] = {
            fast = propagation_of(ns:mounts { propagate_from = true }),
            mountinfo = propagation_of(mi),
            y = mi:find("/Y"),
          }
        end
        return res, A:find("/X").shared
      end)
      for label, r in pairs(out) do
        assert.are.same(r.mountinfo, r.fast, label)
      end
      -- the kernel does answer propagate_from there: the test is not vacuous
      assert.are.equal(g1, out.C.y.propagate_from)
      assert.are.equal(g1, out.E.y.propagate_from)
      assert.are_not.equal(g1, out.E.y.master)
    end)

    it("of another namespace: the mountinfo path (older kernels) gives the same table",
       function()
      local fast, slow = scenario(function(A)
        A:mkdir("/X"); A:mount("g1", "/X", "tmpfs"); A:make_shared("/X")
        local B = A:unshare { propagation = "slave" }
        B:mkdir("/X/b"); B:mount("b", "/X/b", "tmpfs")
        local function rows(t)
          local out = {}
          for i, m in ipairs(t) do
            m.unique_id, m.parent_unique_id = nil, nil -- statmount's only
            out[i] = fields(m)
          end
          return out
        end
        local f = rows(B:mounts { propagate_from = true })
        local real = core.features
        core.features = function() -- a kernel without listmount by namespace ID
          local feat = real()
          feat.listmount_ns = false
          return feat
        end
        local ok, s = pcall(B.mounts, B, { propagate_from = true })
        core.features = real
        return f, rows(assert(ok and s, s))
      end)
      assert.are.same(slow, fast)
      assert.is_true(#fast >= 3)
    end)

    -- #novalgrind: the jail runs /proc/PID/exe again, which under valgrind is
    -- valgrind's own loader, not the interpreter
    it("equals /proc/self/mountinfo in a chroot (the chroot's answer) #novalgrind", function()
      -- the interpreter and module of this run, seen again inside the jail
      local so = assert(package.searchpath("mountns.core", package.cpath))
      local build = so:match("^(.*)/mountns/core%.so$")
      local tree = debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or "."
      local text, outside = mountns.isolate(function()
        local exe = assert(io.popen("readlink /proc/" .. core.getpid() .. "/exe")):read("*l")
        local base = helper.sandbox()
        local J = base .. "/jail"
        local abs_tree = assert(io.popen("cd " .. tree .. " && pwd")):read("*l")
        local abs_build = build:sub(1, 1) == "/" and build or (abs_tree .. "/" .. build)
        for _, d in ipairs { base .. "/A", base .. "/B", J .. "/a", J .. "/c", J .. "/usr",
                             J .. "/proc", J .. "/tree", J .. "/build" } do
          assert(mountns.mkdir(d, { parents = true }))
        end
        -- g1: A (outside) and jail/a; g2: B (outside), a slave of g1;
        -- jail/c: a slave of g2. From the jail no peer of g2 is reachable:
        -- propagate_from is g1 there, while from / it is g2, its master
        assert(mountns.mount("g1", base .. "/A", "tmpfs"))
        assert(mountns.make_shared(base .. "/A"))
        assert(mountns.bind(base .. "/A", J .. "/a"))
        assert(mountns.bind(base .. "/A", base .. "/B"))
        assert(mountns.make_slave(base .. "/B")); assert(mountns.make_shared(base .. "/B"))
        assert(mountns.bind(base .. "/B", J .. "/c")); assert(mountns.make_slave(J .. "/c"))
        assert(mountns.bind("/usr", J .. "/usr", { recursive = true }))
        assert(mountns.bind("/proc", J .. "/proc", { recursive = true }))
        assert(mountns.bind(abs_tree, J .. "/tree"))
        assert(mountns.bind(abs_build, J .. "/build"))
        for _, l in ipairs { "bin", "lib", "lib64", "sbin" } do
          assert(mountns.symlink("usr/" .. l, J .. "/" .. l))
        end
        local script = "local m = require 'mountns' "
          .. "for _, r in ipairs(m.mounts { propagate_from = true }) do "
          .. "print('S', r.id, r.target, r.propagate_from) end "
          .. "for _, r in ipairs(m.mountinfo()) do "
          .. "print('M', r.id, r.target, r.propagate_from) end"
        local p = assert(io.popen("LUA_PATH='/tree/lua/?.lua;/tree/lua/?/init.lua' "
          .. "LUA_CPATH='/build/?.so' chroot " .. J .. " " .. exe .. " -e \"" .. script
          .. "\" 2>&1"))
        local text = p:read("*a")
        p:close()
        return text, assert(mountns.mountinfo()):find(J .. "/c")
      end)
      local views = { S = {}, M = {} }
      for kind, id, target, from in text:gmatch("([SM])\t(%d+)\t(%S+)\t(%S+)\n") do
        views[kind][tonumber(id)] = target .. " " .. from
      end
      assert.are.same(views.M, views.S)
      assert.truthy(next(views.M), text)
      -- the jail's answer for /c is not the namespace's (a real difference)
      local from = views.M[outside.id]:match("^/c (%d+)$")
      assert.is_truthy(from, text)
      assert.is_nil(outside.propagate_from)
    end)
  end)

  describe("find", function()
    it("finds a mount hidden by an over-mount of its parent, as the table does", function()
      local r = scenario(function(ns)
        ns:mkdir("/x"); ns:mount("under", "/x", "tmpfs")
        ns:mkdir("/x/y"); ns:mount("hidden", "/x/y", "tmpfs")
        ns:mount("over", "/x", "tmpfs") -- /x/y is no longer reachable by path
        local ok = pcall(expect.mounted, ns, "/x/y")
        return { find = ns:find("/x/y"), table = ns:mounts():find("/x/y"),
                 mountinfo = ns:run(function() return assert(mountns.mountinfo()):find("/x/y") end),
                 expect_ok = ok, x = ns:find("/x") }
      end)
      assert.is_table(r.mountinfo)
      assert.are.equal("hidden", r.mountinfo.source)
      assert.are.same(fields(r.table), fields(r.find))
      assert.are.equal(r.mountinfo.id, r.find.id)
      assert.is_true(r.expect_ok)
      assert.are.equal("over", r.x.source)
    end)

    it("answers the stack path lookup reaches when a hidden one is at the same path", function()
      local r = scenario(function(ns)
        -- /x (a slave of /p's group) is over-mounted by "over"; "visible"
        -- is mounted on over's y. Then "late" mounted at /p/y propagates to
        -- the slave's y, under "over": a second, hidden /x/y, newer than
        -- the visible one.
        ns:mkdir("/p"); ns:mount("P", "/p", "tmpfs"); ns:make_shared("/p")
        ns:mkdir("/p/y"); ns:mkdir("/x"); ns:bind("/p", "/x"); ns:make_slave("/x")
        ns:mount("over", "/x", "tmpfs")
        ns:mkdir("/x/y"); ns:mount("visible", "/x/y", "tmpfs")
        ns:mount("late", "/p/y", "tmpfs")
        local t = ns:mounts()
        local sources = {}
        for _, m in ipairs(t:find_all("/x/y")) do sources[#sources + 1] = m.source end
        return { find = ns:find("/x/y"), table = t:find("/x/y"), sources = sources,
                 parsed = assert(mountns.parse_mountinfo(
                   ns:run(function() return assert(core.read_mountinfo()) end))):find("/x/y") }
      end)
      -- both stacks are in the table, the hidden one last
      assert.are.same({ "visible", "late" }, r.sources)
      assert.are.equal("visible", r.find.source)
      assert.are.same(fields(r.find), fields(r.table))
      assert.are.equal("visible", r.parsed.source)
    end)

    it("takes the table when statmount lacks fields (Linux 6.12: no source)", function()
      local r = scenario(function(ns)
        ns:mkdir("/S"); ns:mount("over", "/S", "tmpfs")
        ns:mkdir("/B"); ns:bind("/S", "/B")
        local real_features, real_statmount = core.features, core.statmount
        -- what 6.12's statmount gives: every call works, no SB_SOURCE, and
        -- features() says so (its probe finds no SB_SOURCE in the mask)
        local out
        local ok, err = pcall(function()
          core.statmount = function(...)
            local rec = real_statmount(...)
            if rec then rec.source = "none" end
            return rec
          end
          core.features = function()
            local f = real_features()
            f.statmount_complete = false
            return f
          end
          out = { find = ns:find("/S"), table = ns:mounts():find("/S"), bind = ns:find("/B") }
        end)
        core.features, core.statmount = real_features, real_statmount
        assert(ok, err)
        return out
      end)
      assert.are.equal("over", r.table.source)
      assert.are.same(fields(r.table), fields(r.find))
      assert.are.equal("over", r.bind.source)
    end)

    it("equals the table's record field by field (source included)", function()
      local r = scenario(function(ns)
        ns:mkdir("/S"); ns:mount("src1", "/S", "tmpfs", "nosuid,nodev", "size=1m")
        ns:make_shared("/S")
        ns:mkdir("/S/sub"); ns:mount("src2", "/S/sub", "tmpfs")
        ns:mkdir("/B"); ns:bind("/S/sub", "/B")
        ns:mount("src3", "/S", "tmpfs") -- stacked on /S
        local sh2 = ns:unshare { propagation = "slave" }
        local out = {}
        for _, who in ipairs { ns, sh2 } do
          local t = who:mounts()
          for _, p in ipairs { "/", "/S", "/S/sub", "/B" } do
            out[#out + 1] = { p, fields(who:find(p)), fields(t:find(p)) }
          end
        end
        return out
      end)
      for _, c in ipairs(r) do
        assert.is_table(c[2], c[1])
        assert.are.same(c[3], c[2], c[1])
      end
    end)
  end)

  describe("paths", function()
    it("are normalised lexically by mountns.table.normpath", function()
      local n = mtable.normpath
      assert.are.equal("/S", n("/S/"))
      assert.are.equal("/S", n("//S"))
      assert.are.equal("/S", n("/./S"))
      assert.are.equal("/S/a", n("/S//a/."))
      assert.are.equal("/S", n("/T/../S"))
      assert.are.equal("/", n("/.."))
      assert.are.equal("/", n("//"))
      assert.are.equal("/...", n("/.../"))
      assert.are.equal("/a b/c", n("/a b/c")) -- untouched when normal
      assert.matches("bad argument #1 to 'normpath' %(absolute path expected, got \"S\"%)",
        raised(n, "S"))
      assert.matches("path contains a NUL byte", raised(n, "/S\0x"))
      assert.matches("path expected, got no value", raised(n, nil))
    end)

    it("mean the same mount in find, every expect check and the diagnostics", function()
      local out, id, diag = scenario(function(ns)
        ns:mkdir("/S"); ns:mount("s", "/S", "tmpfs"); ns:make_shared("/S")
        ns:mkdir("/P"); ns:bind("/S", "/P")
        ns:mkdir("/V"); ns:bind("/S", "/V"); ns:make_slave("/V")
        local out = { ids = {}, checks = {} }
        local t = ns:mounts()
        for _, p in ipairs { "/S", "/S/", "//S", "/./S", "/P/../S", "/S/." } do
          out.ids[#out.ids + 1] = { p, ns:find(p) and ns:find(p).id, t:find(p) and t:find(p).id,
                                    #t:find_all(p) }
          out.checks[#out.checks + 1] = { p,
            pcall(expect.mounted, ns, p),
            not pcall(expect.not_mounted, ns, p),
            pcall(expect.propagation, ns, p, "shared"),
            pcall(expect.peers, { ns, p }, { ns, "/P/" }),
            pcall(expect.slave_of, { ns, "//V" }, { ns, p }),
            pcall(expect.not_locked, ns, p),
            pcall(la.mounted, ns, p),
            #t:peers(p) }
        end
        -- the diagnostic marks the mount a normalised path names
        local _, diag = pcall(expect.not_mounted, ns, "/S/")
        return out, t:find("/S").id, tostring(diag)
      end, { timeout = 600 }) -- 36 checks, each a table read or a probe: minutes under valgrind
      for _, c in ipairs(out.ids) do
        assert.are.same({ c[1], id, id, 1 }, c)
      end
      for _, c in ipairs(out.checks) do
        assert.are.same({ c[1], true, true, true, true, true, true, true, 1 }, c)
      end
      -- the headline names the normalised path, and its line is marked
      assert.matches("^expected no mount at /S in ", diag)
      assert.matches("\n  >> [^\n]*/S%s+" .. id .. " ", diag)
    end)
    -- #novalgrind: mount events come from fanotify + statmount, ENOSYS there
    it("mean the same mount in expect.propagates #novalgrind", function()
      local ok, err = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
        sh1:mkdir("/X/a")
        local sh2 = sh1:unshare { propagation = "unchanged" }
        local ok, err = pcall(expect.propagates, function() sh1:mount("a", "/X/a", "tmpfs") end,
          { sh1, "/X//a/" }, { sh2, "/X/./a" })
        return ok, not ok and tostring(err) or nil
      end)
      assert.is_true(ok, err)
    end)
  end)

  describe("expect checks that name a mount", function()
    it("fail either way when it is not there, naming the missing one", function()
      local r = scenario(function(ns)
        ns:label("sh1")
        ns:mkdir("/S"); ns:mount("s", "/S", "tmpfs"); ns:make_shared("/S")
        ns:mkdir("/V"); ns:bind("/S", "/V"); ns:make_slave("/V")
        local function err(fn, ...) return raised(fn, ...) or "passed" end
        return {
          not_peers = err(expect.not_peers, { ns, "/S" }, { ns, "/Typo" }),
          not_peers2 = err(expect.not_peers, { ns, "/Typo" }, { ns, "/S" }),
          peers = err(expect.peers, { ns, "/S" }, { ns, "/Typo" }),
          slave_of = err(expect.slave_of, { ns, "/V" }, { ns, "/Typo" }),
          la_not_peers = err(la.is_not.peers, { ns, "/S" }, { ns, "/Typo" }),
          la_not_slave_of = err(la.is_not.slave_of, { ns, "/Typo" }, { ns, "/S" }),
          la_not_propagation = err(la.is_not.propagation, ns, "/Typo", "shared"),
          -- the checks still hold where both mounts are there
          ok_not_peers = err(expect.not_peers, { ns, "/S" }, { ns, "/V" }),
          ok_la = err(la.is_not.slave_of, { ns, "/S" }, { ns, "/V" }),
        }
      end)
      for _, k in ipairs { "not_peers", "not_peers2", "peers", "slave_of", "la_not_peers",
                           "la_not_slave_of", "la_not_propagation" } do
        assert.matches("/Typo in sh1 mnt:%[%d+%]", r[k], 1, false, k)
        assert.are_not.equal("passed", r[k], k)
      end
      assert.matches("nothing is mounted at /Typo in sh1", r.not_peers)
      assert.are.equal("passed", r.ok_not_peers)
      assert.are.equal("passed", r.ok_la)
    end)

    it("raise on a relative path or a NUL byte, at the caller's line", function()
      local r = scenario(function(ns)
        ns:mkdir("/S"); ns:mount("s", "/S", "tmpfs")
        return { raised(function() expect.mounted(ns, "S") end),
                 raised(function() expect.peers({ ns, "/S" }, { ns, "S" }) end),
                 raised(function() local m = ns:find("/S\0x"); return m end),
                 raised(function() local m = ns:mounts():find("S"); return m end),
                 raised(function() expect.not_mounted(ns, "//S/../..\0") end) }
      end)
      assert.matches("^spec/scenario/14%-answers_spec%.lua:%d+: bad argument #2 to 'mounted' "
        .. "%(absolute path expected, got \"S\"%)", r[1])
      assert.matches("^spec/scenario/14%-answers_spec%.lua:%d+: bad argument #2 to 'peers'", r[2])
      assert.matches("^spec/scenario/14%-answers_spec%.lua:%d+: bad argument #1 to 'ns:find' "
        .. "%(path contains a NUL byte%)", r[3])
      assert.matches("^spec/scenario/14%-answers_spec%.lua:%d+: bad argument #1 to 'find'", r[4])
      assert.matches("^spec/scenario/14%-answers_spec%.lua:%d+: bad argument #2 to 'mounted' "
        .. "%(path contains a NUL byte%)", r[5])
    end)
  end)
end)
