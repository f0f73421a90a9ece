-- Scenarios against the real kernel: namespaces, methods, diff, peer
-- groups, the expect assertions and their diagnostics, bin/mountns.
local mountns = require "mountns"
local core = require "mountns.core"
local expect = require "mountns.expect"
local helper = require "helper"
-- modules a scenario uses are loaded before it starts: its / is a new tmpfs
local la = require "mountns.luassert"

local scenario = mountns.scenario

-- the seed article's set-up: shared /X and /Y, sh2 a copy, /Z a bind of /X
local function article(sh1)
  sh1:label("sh1")
  sh1:mkdir("/X"); sh1:mkdir("/Y")
  sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
  local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
  sh1:mkdir("/Z"); sh1:bind("/X", "/Z")
  return sh2
end

describe("scenario", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  it("starts on a fresh tmpfs root that shows nothing of the host", function()
    local t = scenario(function(ns) return ns:mounts() end)
    assert.are.equal(1, #t)
    assert.are.equal("/", t[1].target)
    assert.are.equal("tmpfs", t[1].fstype)
    assert.are.equal("private", t[1].propagation)
  end)

  it("returns fn's results and passes extra arguments", function()
    assert.are.same({ 3, "x" }, { scenario("args", function(_, a, b) return a + b, "x" end,
                                           nil, 1, 2) })
  end)

  it("reproduces the seed article's peer groups", function()
    local r = scenario(function(sh1)
      local sh2 = article(sh1)
      local a, b = sh1:mounts(), sh2:mounts()
      return { x1 = a:find("/X"), z1 = a:find("/Z"), y1 = a:find("/Y"), root1 = a:find("/"),
               x2 = b:find("/X"), y2 = b:find("/Y"), z2 = b:find("/Z"), root2 = b:find("/"),
               ids = { sh1:id(), sh2:id() } }
    end)
    assert.is_number(r.x1.shared)
    assert.are.equal(r.x1.shared, r.z1.shared)
    assert.are.equal(r.x1.shared, r.x2.shared)
    assert.are.equal(r.y1.shared, r.y2.shared)
    assert.are_not.equal(r.x1.shared, r.y1.shared)
    assert.are.equal("private", r.root1.propagation)
    assert.are.equal("private", r.root2.propagation)
    assert.is_nil(r.z2)
    assert.are_not.equal(r.x1.id, r.x2.id)
    assert.are_not.equal(r.ids[1], r.ids[2])
  end)

  describe("namespace methods", function()
    it("unshare defaults to private, like unshare(1)", function()
      local p = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
        return sh1:unshare():find("/X").propagation
      end)
      assert.are.equal("private", p)
    end)

    it("unshare 'slave' gives master:N of the old group, one way only", function()
      local r = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
        local sl = sh1:unshare { propagation = "slave" }
        sh1:mkdir("/X/a"); sh1:mount("a", "/X/a", "tmpfs")
        sl:mkdir("/X/b"); sl:mount("b", "/X/b", "tmpfs")
        return { g = sh1:find("/X").shared, s = sl:find("/X"),
                 a_in_slave = sl:find("/X/a") ~= nil, b_in_master = sh1:find("/X/b") ~= nil }
      end)
      assert.are.equal("slave", r.s.propagation)
      assert.are.equal(r.g, r.s.master)
      assert.is_true(r.a_in_slave)
      assert.is_false(r.b_in_master)
    end)

    it("namespaces can unshare again, any number of them", function()
      local n, group_size = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
        local all, ns = { sh1 }, sh1
        for _ = 1, 5 do
          ns = ns:unshare { propagation = "unchanged" }
          all[#all + 1] = ns
        end
        local groups = mountns.peer_groups((table.unpack or unpack)(all)) -- luacheck: ignore
        local g = groups[sh1:find("/X").shared]
        return #all, #g
      end)
      assert.are.equal(6, n)
      assert.are.equal(6, group_size)
    end)

    it("mount, umount, bind, move, remount, make_* act in their namespace", function()
      local r = scenario(function(sh1)
        local sh2 = sh1:unshare()
        sh2:mkdir("/a/b"); sh2:mkdir("/c"); sh2:mkdir("/d")
        sh2:mount("a", "/a", "tmpfs", "nosuid")
        sh2:mkdir("/a/b")
        sh2:bind("/a", "/c")
        sh2:move("/c", "/d")
        sh2:remount("/d", "ro", nil, { bind = true })
        sh2:make_unbindable("/a")
        sh2:mount("e", "/a/b", "tmpfs")
        sh2:make_shared("/a/b")
        sh2:make_slave("/a/b") -- no peers: the kernel makes it private
        sh2:umount("/a/b")
        local t = sh2:mounts()
        return { in_sh1 = #sh1:mounts(), a = t:find("/a"), c = t:find("/c"), d = t:find("/d"),
                 b = t:find("/a/b") }
      end)
      assert.are.equal(1, r.in_sh1)
      assert.truthy(r.a.options:match("nosuid"))
      assert.are.equal("unbindable", r.a.propagation)
      assert.is_nil(r.c)
      assert.truthy(r.d.options:match("^ro"))
      assert.is_nil(r.b)
    end)

    it("make_private recursive and make_shared recursive", function()
      local shared, private = scenario(function(sh1)
        sh1:mkdir("/a"); sh1:mount("a", "/a", "tmpfs")
        sh1:mkdir("/a/b"); sh1:mount("b", "/a/b", "tmpfs")
        sh1:make_shared("/a", { recursive = true })
        local s = sh1:find("/a/b").propagation
        sh1:make_private("/a", { recursive = true })
        return s, sh1:find("/a/b").propagation
      end)
      assert.are.equal("shared", shared)
      assert.are.equal("private", private)
    end)

    -- #novalgrind: valgrind 3.19 answers open_tree with ENOSYS (fuzz/README.md)
    helper.feature_it("mount_setattr")("new mount API methods act in their namespace #novalgrind",
      function()
      local r = scenario(function(sh1)
        local sh2 = sh1:unshare()
        sh2:mkdir("/A"); sh2:mkdir("/B"); sh2:mkdir("/C")
        sh2:mount("a", "/A", "tmpfs")
        local fd = sh2:open_tree("/A", { clone = true })
        sh2:move_mount(fd, "/B")
        fd:close()
        local fresh = sh2:fsmount("tmpfs", { size = "1m" })
        sh2:move_mount(fresh, "/C")
        fresh:close()
        sh2:mount_setattr("/B", { ro = true, propagation = "shared" })
        local t = sh2:mounts()
        local u = sh1:unshare { user = true }
        local ok, err = pcall(u.open_tree, u, "/")
        return { b = t:find("/B"), c = t:find("/C"), in_sh1 = sh1:find("/B"),
                 agent_err = not ok and err }
      end)
      assert.truthy(r.b.options:match("^ro"))
      assert.are.equal("shared", r.b.propagation)
      assert.are.equal("a", r.b.source)
      assert.are.equal("tmpfs", r.c.fstype)
      assert.is_nil(r.in_sh1)
      assert.truthy(r.agent_err:match("open_tree: not available in a namespace of another user"))
      end)

    it("features() first asked inside a scenario still sees listmount by ns ID", function()
      local f = mountns.features()
      if not f.listmount_ns then
        pending("this kernel lacks listmount_ns (listmount by namespace ID)")
        return
      end
      -- a fresh process: features() is probed once per process, after the
      -- pivot_root here, when there is no /proc (the pinned one is used);
      -- the table has unique IDs where it comes from statmount
      local out = helper.sh(helper.lua_vars() .. [[ -e '
        local m = require "mountns"
        print(m.scenario(function(ns)
          return m.features().listmount_ns, ns:mounts()[1].unique_id ~= nil
        end))' 2>&1]])
      assert.are.equal("true\t" .. tostring(f.statmount_complete), out)
    end)

    it("run calls a function inside the namespace and comes back", function()
      local inside, back, after, where = scenario(function(sh1)
        local sh2 = sh1:unshare()
        local id = sh2:run(function() return mountns.namespace():id() end)
        local here = mountns.namespace():id() == sh1:id()
        local err = select(2, pcall(sh2.run, sh2, function() error("in sh2") end))
        -- after each failure in sh2 (a raising ns:run, a failing method) the
        -- process is back in sh1
        local ids = { mountns.namespace():id() }
        pcall(sh2.umount, sh2, "/nope")
        ids[2] = mountns.namespace():id()
        return id == sh2:id(), here, err, { ids[1] == sh1:id(), ids[2] == sh1:id() }
      end)
      assert.is_true(inside)
      assert.is_true(back)
      assert.truthy(after:match("in sh2"))
      assert.are.same({ true, true }, where)
    end)

    it("pid is a process in the namespace: /proc/PID/mountinfo shows it", function()
      local same, twice, alive = scenario(function(sh1)
        local sh2 = article(sh1)
        local pid = sh2:pid()
        local seen = mountns.mountinfo(pid)
        local mine = sh2:mounts()
        local ok = #seen == #mine
        for i, m in ipairs(mine) do ok = ok and seen[i].id == m.id end
        sh2:close()
        return ok, pid == sh1:pid() and "same" or "different", mountns.mountinfo(pid)
      end)
      assert.is_true(same)
      assert.are.equal("different", twice)
      assert.is_nil(alive) -- closing the namespace ended its process
    end)

    it("close tears the namespace down: its mounts leave the peer group", function()
      local before, after, err = scenario(function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
        local sh2 = sh1:unshare { propagation = "unchanged" }
        local g = mountns.peer_groups(sh1, sh2)[sh1:find("/X").shared]
        sh2:close(); sh2:close()
        local ok, e = pcall(sh2.mounts, sh2)
        return #g, #mountns.peer_groups(sh1)[sh1:find("/X").shared], not ok and e
      end)
      assert.are.equal(2, before)
      assert.are.equal(1, after)
      assert.truthy(err:match("closed namespace"))
    end)

    it("find returns the topmost mount at a path", function()
      local src = scenario(function(sh1)
        sh1:mkdir("/m"); sh1:mount("under", "/m", "tmpfs"); sh1:mount("over", "/m", "tmpfs")
        return sh1:find("/m").source
      end)
      assert.are.equal("over", src)
    end)

    it("methods raise the core's message", function()
      local msgs = scenario(function(sh1)
        local out = {}
        local function try(f, ...) out[#out + 1] = select(2, pcall(f, sh1, ...)) end
        try(sh1.bind, "/nope", "/")
        sh1:mkdir("/plain")
        try(sh1.umount, "/plain")
        try(sh1.move, "/nope", "/x")
        try(sh1.mount, "x", "/missing", "tmpfs")
        try(sh1.make_slave, "/missing")
        try(sh1.remount, "/missing", "ro")
        return out
      end)
      assert.truthy(msgs[1]:match("bind /nope /: No such file or directory %(ENOENT%)"))
      assert.truthy(msgs[2]:match("umount /plain: Invalid argument %(EINVAL%)"))
      assert.truthy(msgs[3]:match("move /nope /x: .*%(ENOENT%)"))
      assert.truthy(msgs[4]:match("mount x /missing: .*%(ENOENT%)"))
      assert.truthy(msgs[5]:match("make%-slave /missing: .*%(ENOENT%)"))
      assert.truthy(msgs[6]:match("remount /missing: .*%(ENOENT%)"))
    end)
  end)

  describe("diff", function()
    it("reports added, removed and changed mounts of one event", function()
      local d = scenario(function(sh1)
        sh1:mkdir("/a"); sh1:mkdir("/b")
        sh1:mount("a", "/a", "tmpfs")
        local before = sh1:mounts()
        sh1:umount("/a")
        sh1:mount("b", "/b", "tmpfs")
        sh1:make_shared("/")
        return mountns.diff(before, sh1:mounts())
      end)
      assert.are.equal(1, #d.added)
      assert.are.equal("/b", d.added[1].target)
      assert.are.equal(1, #d.removed)
      assert.are.equal("/a", d.removed[1].target)
      assert.are.equal(1, #d.changed)
      assert.are.equal("/", d.changed[1].target)
      assert.are.same({ "propagation", "shared" }, d.changed[1].fields)
    end)

    it("does not mistake a reused mount ID for the same mount", function()
      local d, reused = scenario(function(sh1)
        sh1:mkdir("/a"); sh1:mkdir("/b")
        sh1:mount("a", "/a", "tmpfs")
        local before = sh1:mounts()
        local id = before:find("/a").id
        sh1:umount("/a")
        sh1:mount("b", "/b", "tmpfs")
        local after = sh1:mounts()
        return mountns.diff(before, after), after:find("/b").id == id
      end)
      assert.are.equal(1, #d.added)
      assert.are.equal(1, #d.removed)
      if reused then assert.are.equal(d.added[1].id, d.removed[1].id) end
    end)
  end)

  describe("expect", function()
    it("passes on what the kernel did", function()
      local ok = scenario(function(sh1)
        local sh2 = article(sh1)
        expect.peers({ sh1, "/X" }, { sh2, "/X" }, { sh1, "/Z" })
        expect.peers({ sh1, "/Y" }, { sh2, "/Y" })
        expect.not_peers({ sh1, "/X" }, { sh1, "/Y" })
        expect.mounted(sh1, "/Z")
        expect.not_mounted(sh2, "/Z")
        expect.propagation(sh1, "/", "private")
        expect.propagation(sh2, "/X", "shared")
        local sl = sh1:unshare { propagation = "slave" }
        expect.slave_of({ sl, "/X" }, { sh1, "/X" })
        expect.fails("ENOENT", sh2.bind, sh2, "/nope", "/X")
        return true
      end)
      assert.is_true(ok)
    end)

    local function failure(fn)
      return scenario(function(sh1)
        local sh2 = article(sh1)
        local ok, err = pcall(fn, sh1, sh2)
        assert(not ok, "the expectation should have failed")
        return err
      end)
    end

    it("mounted fails with both tables and the line marked", function()
      local err = failure(function(_, sh2) expect.mounted(sh2, "/Z") end)
      assert.truthy(err:match("expected a mount at /Z in sh2 mnt:%[%d+%]"))
      assert.truthy(err:match("sh2 mnt:%[%d+%]:\n"))
      assert.truthy(err:match("\n     ├─/X +%d+ +%d+ shared +shared:%d+"))
    end)

    it("not_mounted marks the offending mount", function()
      local err = failure(function(sh1) expect.not_mounted(sh1, "/Z") end)
      assert.truthy(err:match("expected no mount at /Z in sh1"))
      assert.truthy(err:match("\n  >> └─/Z +%d+ +%d+ shared +shared:%d+"))
    end)

    it("peers shows every namespace involved", function()
      local err = failure(function(sh1, sh2) expect.peers({ sh1, "/X" }, { sh2, "/Y" }) end)
      assert.truthy(err:match("expected one peer group: /X in sh1 .*%(shared:%d+%), /Y in sh2"))
      assert.truthy(err:match("sh1 mnt:%[%d+%]:\n.*>> ├─/X"))
      assert.truthy(err:match("sh2 mnt:%[%d+%]:\n.*>> └─/Y"))
    end)

    it("not_peers, propagation and slave_of fail with their reason", function()
      local e1 = failure(function(sh1, sh2) expect.not_peers({ sh1, "/X" }, { sh2, "/X" }) end)
      assert.truthy(e1:match("expected not one peer group"))
      local e2 = failure(function(sh1) expect.propagation(sh1, "/X", "slave") end)
      assert.truthy(e2:match("expected /X in sh1 mnt:%[%d+%] to be slave, it is shared"))
      local e3 = failure(function(sh1, sh2) expect.slave_of({ sh2, "/X" }, { sh1, "/X" }) end)
      assert.truthy(e3:match("expected /X in sh2 mnt:%[%d+%] to be a slave of /X in "
        .. "sh1 mnt:%[%d+%]'s peer group "
        .. "%(its master: nil, the group: %d+%)"))
    end)

    it("fails also takes a returned failure, as the core calls give", function()
      local msg = scenario(function(sh1)
        sh1:mkdir("/plain")
        return expect.fails("EINVAL", mountns.umount, "/plain")
      end)
      assert.are.equal("umount /plain: Invalid argument (EINVAL)", msg)
    end)

    it("fails checks the errno name", function()
      local e1, e2 = scenario(function(sh1)
        local _, a = pcall(expect.fails, "EINVAL", sh1.bind, sh1, "/nope", "/")
        local _, b = pcall(expect.fails, "EINVAL", sh1.mkdir, sh1, "/fine")
        return a, b
      end)
      assert.truthy(e1:match("expected an error naming EINVAL, got: bind /nope /: .*%(ENOENT%)"))
      assert.truthy(e2:match("expected an error naming EINVAL, but the call succeeded"))
    end)
  end)

  describe("luassert", function()
    -- #novalgrind: mount events come from fanotify + statmount, ENOSYS there
    it("registers the checks with busted's assert, with diagnostics #novalgrind", function()
      local ok, neg, err = scenario(function(sh1)
        local sh2 = article(sh1)
        la.mounted(sh1, "/Z")
        la.is_not.mounted(sh2, "/Z")
        la.peers({ sh1, "/X" }, { sh2, "/X" })
        la.is_not.peers({ sh1, "/X" }, { sh1, "/Y" })
        la.propagation(sh1, "/Y", "shared")
        sh1:mkdir("/X/new")
        la.propagates(function() sh1:mount("n", "/X/new", "tmpfs") end,
          { sh1, "/X/new" }, { sh1, "/Z/new" }, { sh2, "/X/new" }) -- /Z: a peer of /X
        local _, e1 = pcall(la.is_not.mounted, sh1, "/Z")
        local _, e2 = pcall(la.peers, { sh1, "/X" }, { sh2, "/Y" })
        return true, tostring(e1), tostring(e2)
      end)
      assert.is_true(ok)
      assert.truthy(neg:match("expected no mount at /Z in sh1"))
      assert.truthy(neg:match(">> └─/Z"))
      assert.truthy(err:match("expected one peer group"))
    end)

    it("without luassert installed, requiring it says what is missing", function()
      -- a Lua whose path is only this tree's lua/: no busted, no luassert
      local code = "package.path = '" .. helper.ROOT .. "/lua/?.lua;" .. helper.ROOT
        .. "/lua/?/init.lua'; local ok, e = pcall(require, 'mountns.luassert'); "
        .. "print(ok, e); assert(require 'mountns')"
      local out = helper.sh(helper.lua_vars() .. ' -e "' .. code .. '" 2>&1; echo "exit=$?"')
      assert.truthy(out:find("false\tmountns.luassert needs the 'luassert' module, which "
        .. "comes with busted", 1, true), out)
      assert.truthy(out:match("exit=0\n?$"), out)
    end)
  end)

  describe("faults", function()
    it("a scenario that raises halfway reports the error, leaves nothing", function()
      local ok, err = pcall(scenario, function(sh1)
        sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
        sh1:unshare { propagation = "unchanged" }:pid()
        error("halfway")
      end)
      assert.is_false(ok)
      assert.truthy(err:match("halfway"))
      assert.are.equal(host_before, helper.host_mountinfo())
    end)

    it("a scenario whose child is killed names the signal", function()
      local ok, err = pcall(scenario, function(sh1)
        sh1:unshare():pid()
        core.kill(core.getpid(), "KILL")
      end)
      assert.is_false(ok)
      assert.truthy(err:match("killed by SIGKILL"))
    end)

    it("leaves no helper process behind", function()
      local pids = scenario(function(sh1)
        local a = article(sh1)
        return { sh1:pid(), a:pid(), a:unshare():pid() }
      end)
      for _, pid in ipairs(pids) do
        assert.is_nil(mountns.namespace(pid))
      end
    end)

    it("runs as an unprivileged user (uid 65534, via a user namespace)", function()
      local out = helper.sh(helper.unpriv_cmd() .. [[ -e '
          local m = require "mountns"
          local e = require "mountns.expect"
          print(require("mountns.core").getuid(), m.scenario(function(sh1)
            sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
            local sh2 = sh1:unshare { propagation = "unchanged" }
            e.peers({ sh1, "/X" }, { sh2, "/X" })
            return sh2:find("/X").propagation
          end))' 2>&1]])
      assert.are.equal(helper.UNPRIV_UID .. "\tshared", out)
    end)
  end)
end)

describe("bin/mountns", function()
  local function run(args)
    local out = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
      .. " bin/mountns " .. args .. " 2>&1; echo \"exit=$?\"")
    return out
  end

  local dir
  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    local f = assert(io.open(dir .. "/two.lua", "w"))
    f:write([[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      mountns.scenario("shared bind joins the group", function(ns)
        ns:mkdir("/X"); ns:mkdir("/Z")
        ns:mount("x", "/X", "tmpfs"); ns:make_shared("/X"); ns:bind("/X", "/Z")
        expect.peers({ ns, "/X" }, { ns, "/Z" })
      end)
      mountns.scenario("private bind does not", function(ns)
        ns:mkdir("/X"); ns:mkdir("/Z")
        ns:mount("x", "/X", "tmpfs"); ns:bind("/X", "/Z")
        expect.peers({ ns, "/X" }, { ns, "/Z" })
      end)
    ]])
    f:close()
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("run prints one line per scenario, the diagnostic, a summary", function()
    local out = run("run " .. dir .. "/two.lua")
    assert.truthy(out:match("\nok   shared bind joins the group %(%d+ ms%)\n")
      or out:match("^ok   shared bind joins the group %(%d+ ms%)\n"))
    assert.truthy(out:match("\nFAIL private bind does not"))
    assert.truthy(out:match("expected one peer group: /X in ns1 mnt:%[%d+%] %(private%)"))
    assert.truthy(out:match("\n1 passed, 1 failed\nexit=1$"))
  end)

  it("runs as bin/mountns from the tree's root, with no LUA_PATH set", function()
    -- this suite's interpreter: only its build/ dir need exist
    local out = helper.sh("cd " .. helper.ROOT .. " && env -u LUA_PATH -u LUA_CPATH "
      .. "-u LUA_PATH_5_4 -u LUA_CPATH_5_4 " .. helper.LUA
      .. " bin/mountns run examples/shared.lua 2>&1")
    assert.matches("\n1 passed, 0 failed$", out)
  end)

  it("show --watch on a PID that does not exist is a clean error", function()
    assert.matches("^mountns: .*%(ENOENT%)\nexit=2$", run("show --watch 4194304"))
  end)

  it("run --tap prints TAP", function()
    local out = run("run --tap " .. dir .. "/two.lua")
    assert.truthy(out:match("^TAP version 13\nok 1 %- shared bind joins the group\n"
      .. "not ok 2 %- private bind does not\n# "))
    assert.truthy(out:match("\n1%.%.2\n"))
  end)

  it("run --dot DIR writes one Graphviz file per scenario", function()
    local out = run("run --dot " .. dir .. "/pics " .. dir .. "/two.lua examples/article.lua")
    assert.truthy(out:match("\n2 passed, 1 failed\nexit=1$"))
    local function read(name)
      local f = io.open(dir .. "/pics/" .. name)
      if not f then return nil end
      local s = f:read("*a"); f:close(); return s
    end
    local a = read("article-1.dot")
    assert.truthy(a:match("^digraph mountns {"))
    assert.truthy(a:match('subgraph cluster_1 {\n    label="sh1";'))
    assert.truthy(a:match('subgraph cluster_2 {\n    label="sh2";'))
    -- /X, /Z of sh1 and /X of sh2 in one coloured peer group
    local _, members = a:gsub('class="peer%-group%-1"%]', "")
    assert.are.equal(3, members)
    assert.truthy(read("two-1.dot"))  -- the passing scenario
    assert.is_nil(read("two-2.dot"))  -- a failed scenario has no picture
  end)

  it("show prints the tree of a PID's namespace, and --json", function()
    local out = run("show " .. core.getpid())
    assert.truthy(out:match("^TARGET +SOURCE +FSTYPE +ID PARENT PROPAGATION +GROUP MASTER\n/ "))
    assert.truthy(run("show --dot"):match('^digraph mountns {.*label="this process'))
    local js = run("show --json")
    assert.truthy(js:match('^{"mounts":%[{"id":%d+,"parent_id":%d+'))
    assert.truthy(run("show 4194304"):match("No such file or directory %(ENOENT%)\nexit=2$"))
    assert.truthy(run("bogus"):match("unknown command bogus"))
  end)
end)
