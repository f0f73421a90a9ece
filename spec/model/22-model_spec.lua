-- The model (mountns.model) against the kernel: every case runs the same
-- steps in a kernel scenario (mountns.scenario) and in a model scenario
-- (mountns.model.scenario) and asserts equal golden texts of the
-- namespaces left open and equal outcomes of every step that may fail
-- (ok, or the errno name): each asserts what the kernel did.
local helper = require "helper"
local mountns = require "mountns"
local model = require "mountns.model"
local format = require "mountns.format"

local unpack = table.unpack or unpack -- luacheck: ignore

-- the same steps on the kernel and on the model (spec/helper.lua)
local model_scenario, same = helper.model_scenario, helper.same

-- /X a shared tmpfs with directories q and r; /Y, /Z, /W empty directories
local function base(sh1)
  for _, d in ipairs { "/X", "/Y", "/Z", "/W" } do sh1:mkdir(d) end
  sh1:mount("a", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mkdir("/X/q"); sh1:mkdir("/X/r")
end

describe("the model against the kernel #model", function()
  -- the model follows the running kernel: pending where it has no rules for it
  local it = helper.model_it
  it("the seed article: /Z does not reach sh2", function()
    local text = same(function(sh1, nss)
      sh1:make_private("/")
      sh1:mkdir("/X"); sh1:mkdir("/Y")
      sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
      sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
      nss[2] = sh1:unshare { propagation = "unchanged", label = "sh2" }
      sh1:mkdir("/Z"); sh1:bind("/X", "/Z")
    end)
    assert.truthy(text:find("4 1 0:2 / /Z rw,relatime shared:1", 1, true))
  end)

  it("copies across peers, unchanged, slave and shared copies, in the kernel's order", function()
    same(function(sh1, nss)
      base(sh1)
      sh1:mkdir("/X/sub"); sh1:bind("/X/sub", "/Y")
      local sh2 = sh1:unshare { propagation = "unchanged" }
      nss[2] = sh2
      nss[3] = sh2:unshare { propagation = "slave" }
      nss[4] = sh2:unshare { propagation = "shared" }
      sh1:mount("q", "/X/sub", "tmpfs")
    end)
  end)

  it("make-rslave of binds: the master is the next peer (6.18), whatever its root", function()
    same(function(sh1, nss)
      base(sh1)
      sh1:mkdir("/X/sub"); sh1:bind("/X/sub", "/Y")
      nss[2] = sh1:unshare { propagation = "slave" }
      sh1:mount("q", "/X/sub", "tmpfs")
    end)
  end)

  it("slaves of one master, made in either order", function()
    same(function(sh1)
      base(sh1)
      sh1:bind("/X", "/Y"); sh1:make_slave("/Y")
      sh1:bind("/X", "/Z"); sh1:make_slave("/Z")
      sh1:mount("b", "/X/q", "tmpfs")
    end)
    same(function(sh1)
      base(sh1)
      sh1:bind("/X", "/Y"); sh1:bind("/X", "/Z")
      sh1:make_slave("/Z"); sh1:make_slave("/Y")
      sh1:mount("b", "/X/q", "tmpfs")
    end)
  end)

  it("make-private hands its slaves to its next peer", function()
    same(function(sh1, nss)
      base(sh1)
      sh1:bind("/X", "/Y")
      nss[2] = sh1:unshare { propagation = "slave" }
      sh1:make_private("/X")
      sh1:mount("t", "/Y/q", "tmpfs")
    end)
    same(function(sh1, nss)
      base(sh1)
      sh1:bind("/X", "/Y")
      sh1:bind("/X", "/Z"); sh1:make_slave("/Z")
      sh1:bind("/X", "/W"); sh1:make_slave("/W")
      nss[2] = sh1:unshare { propagation = "slave" }
      sh1:make_private("/X")
      sh1:mount("t", "/Y/q", "tmpfs")
    end)
  end)

  it("a mount made private hands its slaves over as one block, in their order", function()
    same(function(sh1)
      base(sh1)
      sh1:bind("/X", "/Y")
      sh1:bind("/Y", "/Z"); sh1:make_slave("/Z")
      sh1:bind("/Y", "/W"); sh1:make_slave("/W")
      sh1:make_private("/X")
      sh1:mount("t", "/Y/q", "tmpfs")
    end)
  end)

  -- check --random 500 --seed 8 --ops 16, sequence 431 (shrunk): umount
  -- takes two mounts whose slaves go to one peer; the copies a later
  -- mount propagates to those slaves come in that peer's list order
  helper.model_it("slaves an umount hands to one peer: seed 8, sequence 431", function()
    same(function(ns1, nss)
      ns1:mkdir("/a"); ns1:mkdir("/b")
      ns1:make_shared("/")
      ns1:bind("/b", "/a"); ns1:bind("/a", "/a")
      local ns2 = ns1:unshare { propagation = "slave" }
      nss[2] = ns2
      ns2:mkdir("/a/x"); ns2:bind("/a", "/a/x")
      ns1:umount("/b")
      ns1:mount("t2", "/a", "tmpfs")
    end)
  end)

  it("slaves handed over in the order of the unmounted set", function()
    same(function(sh1, nss)
      base(sh1)
      sh1:bind("/X", "/Y"); sh1:bind("/X", "/Z")
      sh1:mount("t", "/X/q", "tmpfs")
      sh1:mkdir("/X/q/k"); sh1:mkdir("/X/q/j")
      sh1:bind("/X/q", "/W")
      local sh2 = sh1:unshare { propagation = "slave" }
      nss[2] = sh2
      -- (these keep the copies under them in sh2)
      sh2:mount("k1", "/Z/q/k", "tmpfs"); sh2:mount("k2", "/Y/q/k", "tmpfs")
      sh1:umount("/X/q")
      sh1:mount("j", "/W/j", "tmpfs")
    end)
  end)

  it("make-slave of the sole member of a group: private, its slaves too", function()
    local text = same(function(sh1, nss)
      base(sh1)
      nss[2] = sh1:unshare { propagation = "slave" }
      sh1:make_slave("/X")
      sh1:make_shared("/X")
      sh1:mount("t", "/X/q", "tmpfs")
    end)
    assert.falsy(text:find("master:", 1, true))
  end)

  it("a propagated copy goes under what is mounted there already", function()
    same(function(sh1)
      base(sh1)
      sh1:bind("/X", "/Y"); sh1:make_slave("/Y")
      sh1:mount("u", "/Y/q", "tmpfs")
      sh1:mount("t", "/X/q", "tmpfs")
    end)
    same(function(sh1)
      base(sh1)
      sh1:bind("/X", "/Y")
      sh1:mount("t", "/Y/q", "tmpfs")
      sh1:make_private("/Y/q")
      sh1:mount("u", "/Y/q", "tmpfs")
      sh1:mount("v", "/X/r", "tmpfs")
    end)
  end)

  it("umount propagates to the copies; a copy with a mount on it stays", function()
    same(function(sh1, nss)
      base(sh1)
      nss[2] = sh1:unshare { propagation = "unchanged" }
      sh1:mount("t", "/X/q", "tmpfs")
      sh1:umount("/X/q")
    end)
    same(function(sh1, nss)
      base(sh1)
      local sh2 = sh1:unshare { propagation = "unchanged" }
      nss[2] = sh2
      sh1:mount("t", "/X/q", "tmpfs")
      sh2:make_private("/X/q")
      sh2:mkdir("/X/q/in"); sh2:mount("i", "/X/q/in", "tmpfs")
      sh1:umount("/X/q")
    end)
  end)

  it("umount of a copy whose root is over-mounted: the over-mount takes its place", function()
    for _, private in ipairs { false, true } do
      local text = same(function(sh1, nss)
        base(sh1)
        local sh2 = sh1:unshare { propagation = "unchanged" }
        nss[2] = sh2
        sh1:mount("t", "/X/q", "tmpfs")
        if private then sh2:make_private("/X/q") end
        sh2:mount("o", "/X/q", "tmpfs")
        sh1:umount("/X/q")
      end)
      -- shared: sh2's over-mount reached sh1's /X/q too, and sh1 unmounted
      -- it there: one left in each; private: sh1's copy in sh2 went, the
      -- over-mount took its place on /X
      local _, n = text:gsub(" /X/q ", "")
      assert.are.equal(private and 1 or 2, n, text)
    end
  end)

  helper.model_it("umount in a peer group of stacked binds: what stays is what holds a "
    .. "mount inside", function()
    same(function(ns1, nss)
      local ns2 = ns1:unshare { propagation = "shared" }
      nss[1] = ns2
      ns2:mkdir("/a/x/y")
      ns2:bind("/a", "/a/x/y")
      ns2:bind("/a", "/a/x/y")
      ns2:bind("/a/x", "/a")
      ns2:bind("/a", "/a")
      ns2:umount("/a")
    end)
  end)

  it("a locked copy goes too", function()
    for _, prop in ipairs { "shared", "unchanged", "slave" } do
      local text = same(function(ns1, nss)
        ns1:mkdir("/a/x")
        ns1:bind("/a", "/a/x")
        ns1:make_shared("/")
        local ns2 = ns1:unshare { propagation = prop, user = true }
        nss[2] = ns2
        assert(ns2:locked("/a/x"))
        ns1:umount("/a/x")
      end)
      assert.falsy(text:find("/a/x", 1, true), text)
    end
  end)

  it("locked copies: of the unmounted mount, they go; of one below it (umount -l), they stay",
     function()
    -- the copy of b (on a's root) in the user namespace goes with b
    local text = same(function(ns1, nss, try)
      ns1:make_shared("/")
      ns1:mkdir("/a")
      ns1:mount("a", "/a", "tmpfs")
      ns1:mount("b", "/a", "tmpfs")
      nss[2] = ns1:unshare { propagation = "unchanged", user = true }
      try(ns1.umount, ns1, "/a")
      try(ns1.umount, ns1, "/a")
    end)
    assert.falsy(text:find("/a", 1, true), text)
    -- below an unbindable rbind unmounted lazily, the locked copies stay
    -- (mountns check seed 11, 16 steps, sequence 135)
    text = same(function(ns1, nss)
      ns1:mkdir("/a/x")
      ns1:bind("/a", "/a/x")
      local ns2 = ns1:unshare { propagation = "shared" }
      ns2:mount("t1", "/a/x", "tmpfs")
      ns2:bind("/a", "/a", { recursive = true })
      local ns3 = ns2:unshare { propagation = "unchanged", user = true }
      nss[2], nss[3] = ns2, ns3
      ns2:make_unbindable("/a")
      ns2:umount("/a", "detach")
    end)
    local _, n = text:gsub("0:2 / /a/x ", "")
    assert.are.equal(2, n, text)
  end)

  it("a locked copy hidden under a mount that goes stays, unless its parent goes", function()
    -- found by mountns check (seed 11, sequence 135): X'' in ns3 stays
    local text = same(function(ns1, nss)
      ns1:mkdir("/a/x")
      local ns2 = ns1:unshare { propagation = "shared" }
      ns2:mount("x", "/a/x", "tmpfs")
      ns2:bind("/a", "/a", { recursive = true })
      local ns3 = ns2:unshare { propagation = "unchanged", user = true }
      nss[1], nss[2] = ns2, ns3
      ns2:umount("/a", "detach")
    end)
    assert.truthy(text:find("0:2 / /a/x rw,relatime\n?$"), text)
    -- and what is mounted on its root stays with it (seed 11 again, with 16 steps)
    text = same(function(ns1, nss)
      ns1:mkdir("/a/x")
      ns1:bind("/a", "/a/x")
      local ns2 = ns1:unshare { propagation = "shared" }
      ns2:mount("t1", "/a/x", "tmpfs")
      ns2:bind("/a", "/a", { recursive = true })
      local ns3 = ns2:unshare { propagation = "unchanged", user = true }
      nss[2], nss[3] = ns2, ns3
      ns2:umount("/a", "detach")
    end)
    local _, n = text:gsub(" /a/x ", "")
    assert.are.equal(3, n, text)
    -- its parent goes too: it goes
    text = same(function(ns1, nss)
      ns1:make_shared("/")
      ns1:mkdir("/t"); ns1:mount("t", "/t", "tmpfs")
      ns1:mkdir("/t/a/x"); ns1:mount("x", "/t/a/x", "tmpfs"); ns1:mount("a", "/t/a", "tmpfs")
      nss[2] = ns1:unshare { propagation = "unchanged", user = true }
      ns1:umount("/t", "detach")
    end)
    assert.falsy(text:find("/t", 1, true), text)
    -- only hidden by a mount that stays: it goes
    same(function(ns1, nss)
      ns1:make_shared("/")
      ns1:mkdir("/a/x"); ns1:mount("x", "/a/x", "tmpfs")
      local ns2 = ns1:unshare { propagation = "unchanged", user = true }
      nss[2] = ns2
      ns2:mount("a2", "/a", "tmpfs")
      ns1:umount("/a/x")
    end)
  end)

  it("lazy umount of a tree; EBUSY without detach", function()
    local _, outcomes = same(function(sh1, nss, try)
      base(sh1)
      nss[2] = sh1:unshare { propagation = "unchanged" }
      sh1:mount("t", "/X/q", "tmpfs"); sh1:mkdir("/X/q/in")
      sh1:mount("i", "/X/q/in", "tmpfs")
      try(sh1.umount, sh1, "/X/q")
      try(sh1.umount, sh1, "/X/q", "detach")
    end)
    assert.are.equal("EBUSY ok", outcomes)
  end)

  it("rbind prunes unbindable mounts; unshare copies them, not unbindable", function()
    local _, outcomes = same(function(sh1, nss, try)
      base(sh1)
      sh1:mount("t", "/X/q", "tmpfs"); sh1:make_unbindable("/X/q")
      sh1:mount("s", "/X/r", "tmpfs")
      sh1:bind("/X", "/Y", { recursive = true })
      try(sh1.bind, sh1, "/X/q", "/Z")
      nss[2] = sh1:unshare { propagation = "unchanged" }
      nss[3] = sh1:unshare { propagation = "private" }
      nss[4] = sh1:unshare { propagation = "shared" }
    end)
    assert.are.equal("EINVAL", outcomes)
  end)

  it("errors: the kernel's errno names", function()
    local _, outcomes = same(function(sh1, _, try)
      sh1:mkdir("/X"); sh1:mkdir("/Y"); sh1:write("/f", "x")
      try(sh1.bind, sh1, "/nope", "/X")
      try(sh1.bind, sh1, "/X", "/nope")
      try(sh1.bind, sh1, "/f", "/X")
      try(sh1.umount, sh1, "/X")
      try(sh1.make_shared, sh1, "/X")
      try(sh1.move, sh1, "/X", "/Y")
      sh1:mount("a", "/X", "tmpfs"); sh1:mkdir("/X/in")
      try(sh1.move, sh1, "/X", "/X/in")
      try(sh1.move, sh1, "/X", "/X")
      sh1:make_shared("/")
      try(sh1.move, sh1, "/X", "/Y")
      sh1:make_private("/")
      sh1:make_unbindable("/X")
      try(sh1.bind, sh1, "/X", "/Y")
      sh1:make_shared("/")
      try(sh1.move, sh1, "/X", "/Y")
      sh1:make_private("/")
      try(sh1.move, sh1, "/X", "/Y")
      sh1:mount("b", "/Y/in", "tmpfs")
      try(sh1.umount, sh1, "/Y")
      try(sh1.umount, sh1, "/Y", "detach")
      try(sh1.mount, sh1, "c", "/f", "tmpfs")
      try(sh1.mount, sh1, "c", "/X", "bogusfs")
    end)
    assert.are.equal("ENOENT ENOENT ENOTDIR EINVAL EINVAL EINVAL ELOOP ELOOP EINVAL "
      .. "EINVAL EINVAL ok EBUSY ok ENOTDIR ENODEV", outcomes)
  end)

  it("the same error message as the core", function()
    local function msg(scenario)
      return scenario(function(ns)
        local ok, e = pcall(ns.bind, ns, "/X", "/Z")
        return ok, e
      end)
    end
    local _, ke = msg(mountns.scenario)
    local _, me = msg(model.scenario)
    assert.are.equal(ke, me)
    assert.are.equal("bind /X /Z: No such file or directory (ENOENT)", me)
  end)

  it("closing a namespace: its mounts leave their groups", function()
    same(function(sh1, nss)
      base(sh1)
      local sh2 = sh1:unshare { propagation = "unchanged" }
      nss[2] = sh2:unshare { propagation = "slave" }
      sh2:close()
      sh1:mount("t", "/X/q", "tmpfs")
    end)
  end)

  it("propagate_from: a master group with no member in the namespace", function()
    same(function(sh1, nss)
      base(sh1)
      local sh2 = sh1:unshare { propagation = "slave" }
      sh2:make_shared("/X")
      local sh3 = sh2:unshare { propagation = "slave" }
      nss[2], nss[3], nss[4] = sh2, sh3, sh3:unshare { propagation = "unchanged" }
      sh2:close()
      sh1:mount("t", "/X/q", "tmpfs")
    end)
    -- sh2's /Z: a slave of /Y's group, which has no member in sh2; /X's,
    -- its master, has one. Asked for, as ns:mounts{propagate_from = true}
    -- (statmount leaves it out unless asked)
    local function run(scenario)
      return scenario(function(sh1)
        base(sh1)
        sh1:bind("/X", "/Y"); sh1:make_slave("/Y"); sh1:make_shared("/Y")
        sh1:bind("/Y", "/Z"); sh1:make_slave("/Z")
        local sh2 = sh1:unshare { propagation = "unchanged" }
        sh2:make_private("/Y")
        return format.golden_text(sh1:mounts { propagate_from = true },
                                  sh2:mounts { propagate_from = true })
      end)
    end
    local text = run(mountns.scenario)
    assert.are.equal(text, run(model.scenario))
    assert.truthy(text:find("8 5 0:2 / /Z rw,relatime master:2 propagate_from:1", 1, true), text)
  end)

  it("remount and mount flags: the options the kernel shows", function()
    local _, outcomes = same(function(sh1, _, try)
      base(sh1)
      sh1:remount("/X", "ro,nosuid")
      sh1:bind("/X", "/Y")
      sh1:remount("/Y", "nodev,noatime", nil, { bind = true })
      sh1:mount("s", "/Z", "tmpfs", "noexec,strictatime")
      try(sh1.remount, sh1, "/X/q")
    end)
    assert.are.equal("EINVAL", outcomes)
  end)

  it("move: the tree goes, submounts with it; a peer moved under its own group", function()
    same(function(sh1, _, try)
      base(sh1)
      sh1:mount("m", "/Y", "tmpfs"); sh1:mkdir("/Y/d")
      sh1:mount("n", "/Y/d", "tmpfs")
      sh1:move("/Y", "/X/q")
      sh1:mount("k", "/Z", "tmpfs")
      sh1:move("/Z", "/X/r")
      try(sh1.move, sh1, "/X/q", "/Y")
    end)
    same(function(ns)
      ns:mkdir("/mnt/1"); ns:mkdir("/tmp")
      ns:bind("/mnt", "/mnt"); ns:make_shared("/mnt")
      ns:bind("/mnt", "/tmp"); ns:move("/tmp", "/mnt/1")
    end)
  end)

  it("stacked mounts", function()
    same(function(sh1)
      base(sh1)
      sh1:mount("b", "/X", "tmpfs")
      sh1:mount("c", "/X", "tmpfs")
      sh1:umount("/X")
      sh1:bind("/X", "/Y")
    end)
  end)

  it("less privileged copies: slaves, locked mounts, EINVAL and EPERM", function()
    local _, outcomes = same(function(sh1, nss, try, note)
      base(sh1)
      sh1:mount("y", "/Y", "tmpfs", "nosuid")
      local u = sh1:unshare { user = true, propagation = "unchanged" }
      nss[2] = u
      note(u:locked("/X"))
      try(u.umount, u, "/X")
      try(u.move, u, "/X", "/Z")
      try(u.remount, u, "/Y", "rw")
      try(u.remount, u, "/Y", "nosuid,nodev", nil, { bind = true })
      try(u.bind, u, "/", "/W")
      u:bind("/", "/W", { recursive = true })
      u:make_shared("/X")
      sh1:mount("t", "/X/q", "tmpfs")
      note(u:locked("/X/q"))
      try(u.umount, u, "/X/q")
      local v = u:unshare { propagation = "unchanged" }
      nss[3] = v
      try(v.umount, v, "/W")
      nss[4] = sh1:unshare { user = true }
      nss[5] = sh1:unshare { user = true, propagation = "shared" }
    end)
    assert.are.equal("true EINVAL EINVAL EPERM ok EINVAL false ok EBUSY", outcomes)
  end)

  it("remount without bind: the superblock's flags, for every mount of it", function()
    local _, outcomes = same(function(ns1, nss, try)
      local ns2 = ns1:unshare { propagation = "private" }
      nss[2] = ns2
      ns2:remount("/", "ro")
      try(ns1.mkdir, ns1, "/c")           -- ns1's / is rw, its superblock is not
      try(ns2.remount, ns2, "/", "rw")
      try(ns1.mkdir, ns1, "/c")
      local u = ns1:unshare { user = true }
      nss[3] = u
      u:mkdir("/t"); u:mount("t", "/t", "tmpfs")
      try(u.remount, u, "/", "ro")        -- a superblock of a more privileged owner
      try(u.remount, u, "/", "ro", nil, { bind = true })
      try(u.remount, u, "/t", "ro")       -- its own
      try(u.mkdir, u, "/t/x")
    end)
    assert.are.equal("EROFS ok ok EPERM ok ok EROFS", outcomes)
  end)

  it("move of a namespace's root: ELOOP (EINVAL when it is locked: not root)", function()
    local _, outcomes = same(function(ns1, nss, try)
      ns1:mkdir("/a")
      try(ns1.move, ns1, "/", "/a")
      nss[2] = ns1:unshare()
      try(nss[2].move, nss[2], "/", "/a")
    end)
    assert.are.equal(helper.root and "ELOOP ELOOP" or "EINVAL EINVAL", outcomes)
  end)

  it("a scenario's / is locked unless root; locked_root models it, and its copies keep it",
     function()
    local function run(scenario)
      return scenario(function(ns1)
        local ns2 = ns1:unshare()
        local ns3 = ns1:unshare { user = true }
        return table.concat({ tostring(ns1:locked("/")), tostring(ns2:locked("/")),
                              tostring(ns3:locked("/")) }, " ")
      end)
    end
    local kernel = run(mountns.scenario)
    assert.are.equal(helper.root and "false false true" or "true true true", kernel)
    assert.are.equal(kernel, run(model_scenario))
    assert.are.equal("false false true", run(model.scenario))
    assert.are.equal("true true true", run(function(fn)
      return model.scenario(fn, { locked_root = true })
    end))
    assert.has_error(function() model.scenario(function() end, { locked_root = 1 }) end,
      "bad argument #2 to 'scenario' (option 'locked_root' must be a boolean, got number)")
    -- --both's mirror knows it too: a move of / agrees with the kernel
    local dir = helper.tempdir()
    local file = helper.write(dir, "move.lua", 'local mountns = require "mountns"\n'
      .. 'mountns.scenario("move /", function(ns)\n  ns:mkdir("/a")\n'
      .. '  assert(not pcall(ns.move, ns, "/", "/a"))\nend)\n')
    local reported = {}
    local ok = require("mountns.scenario").run_file(file, { both = true,
      report = function(name, passed, err) reported[#reported + 1] = { name, passed, err } end })
    os.execute("rm -rf " .. dir)
    assert(ok)
    assert.are.equal(1, #reported)
    assert.is_true(reported[1][2], tostring(reported[1][3]))
  end)

  it("a copy tucked under a mount of a less privileged namespace: that mount stays unlocked",
     function()
    local _, outcomes = same(function(ns1, nss, try)
      ns1:make_shared("/")
      ns1:mkdir("/b")
      local ns2 = ns1:unshare { propagation = "unchanged", user = true }
      nss[2] = ns2
      ns2:mount("t2", "/b", "tmpfs")
      ns1:mount("t3", "/b", "tmpfs")      -- goes under t2 in ns2
      try(ns2.move, ns2, "/b", "/b")       -- t2 onto itself: ELOOP, not locked
      try(ns2.umount, ns2, "/b")
    end)
    assert.are.equal("ELOOP ok", outcomes)
  end)

  it("pivot_root, with and without put_old, into a read-only root", function()
    same(function(sh1, nss)
      sh1:mkdir("/new/old")
      sh1:mount("n", "/new", "tmpfs"); sh1:mkdir("/new/old")
      local c = sh1:unshare()
      nss[2] = c
      c:pivot_root("/new", { put_old = "/old" })
      local d = sh1:unshare()
      nss[3] = d
      d:pivot_root("/new")
      -- into a read-only root: nothing is made there (pivot_root(2)'s "."
      -- "." form; before, mkdir of /ro/.pivot_old failed with EROFS)
      sh1:mkdir("/ro"); sh1:mount("r", "/ro", "tmpfs", "ro")
      local e = sh1:unshare()
      nss[4] = e
      e:pivot_root("/ro")
    end)
  end)
end)

describe("misuse on the kernel and on the model #model", function()
  -- mountns.args holds these checks for both classes: the same bad call
  -- raises the same message on either (kernel-version independent)
  it("the same message for the same bad call", function()
    local function messages(scenario)
      return scenario(function(ns)
        local out = {}
        local function try(f, ...)
          local ok, e = pcall(f, ...)
          out[#out + 1] = ok and "ok" or tostring(e)
        end
        try(ns.mkdir, "/X")
        try(ns.label, 1)
        try(ns.unshare, ns, { propagation = "bogus" })
        try(ns.unshare, ns, { user = 1 })
        try(ns.unshare, ns, { lable = "x" })
        try(ns.mkdir, ns, "/X", { parent = true })
        try(ns.write, ns, "/f", 1)
        try(ns.write, ns, 2, "x") -- a number is not a path, as the core refuses it
        try(ns.read, ns, 2)
        try(ns.exists, ns, 2)
        try(ns.run, ns, 1)
        try(ns.mounts, ns, { rot = "/" })
        try(ns.find, ns, "/", { rot = "/" })
        try(ns.pivot_root, ns, "/", { put = "/old" })
        try(ns.bind, ns, "/", "/", { recursiv = true })
        try(ns.mount, ns, "x", "/", "tmpfs", "bogus")
        -- option values (the core's checks, args.mkdir on both sides)
        try(ns.mkdir, ns, "/a", { parents = "no" })
        try(ns.mkdir, ns, "/b", { mode = "x" })
        try(ns.mkdir, ns, "/b", { mode = "8" })
        try(ns.mkdir, ns, "/c", { mode = 2 ^ 40 })
        try(ns.mkdir, ns, "/c", { mode = 1.5 })
        try(ns.mkdir, ns, "/c", { mode = true })
        try(ns.mkdir, ns)
        try(ns.mkdir, ns, "/d\0e")
        try(ns.find, ns, "/", { root = 5 })
        local sh2 = ns:unshare()
        sh2:close()
        -- a closed namespace's message names it: its text differs (mnt: or model:)
        try(ns.mkdir, sh2, "/Y")
        out[#out] = out[#out]:gsub(" %S+:%b[]", "")
        return table.concat(out, "\n")
      end)
    end
    local ke = messages(mountns.scenario)
    local me = messages(model.scenario)
    assert.are.equal(ke, me)
    assert.truthy(me:find("bad argument #1 to 'ns:unshare' (option 'propagation': invalid "
      .. "value 'bogus' (private, shared, slave or unchanged))", 1, true), me)
    assert.truthy(me:find("calling 'ns:label' on bad self", 1, true), me)
    assert.truthy(me:find("attempt to use closed namespace ns2 (ns:mkdir)", 1, true), me)
    assert.truthy(me:find("bad argument #2 to 'ns:mkdir' (option 'parents' must be a boolean, "
      .. "got string)", 1, true), me)
    assert.truthy(me:find("bad argument #2 to 'ns:mkdir' (mode 'x' is not an octal mode", 1, true),
      me)
    assert.truthy(me:find("bad argument #1 to 'ns:mkdir' (string expected, got nil)", 1, true), me)
    assert.truthy(me:find("bad argument #2 to 'ns:find' (path expected, got number)", 1, true),
      me)
  end)
end)

describe("examples under mountns run --model #model", function()
  -- the model follows the running kernel: pending where it has no rules for it
  local it = helper.model_it
  local files = {}
  local p = io.popen("ls " .. helper.ROOT .. "/examples/*.lua")
  for file in p:lines() do files[#files + 1] = file end
  p:close()
  -- Two `mountns run -j 1 --golden` of all the examples, on the kernel and
  -- --model, instead of two runs a file (the runner forks a child per
  -- file: each file runs there as it does alone). Before each example a
  -- marker file that prints the example's path and runs no scenario (a
  -- ERROR of its own, "no scenario ran") splits the output into the
  -- files' parts. Run once, by the first test that needs them.
  local runs
  local function run_all()
    if runs then return runs end
    local dir = helper.tempdir()
    local args, marker = {}, {}
    for i, file in ipairs(files) do
      marker[i] = helper.write(dir, i .. ".lua", string.format("print(%q)\n", "file " .. file))
      args[#args + 1] = marker[i]
      args[#args + 1] = file
    end
    runs = {}
    for _, mode in ipairs { "", "--model " } do
      local out = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
        .. " bin/mountns run -j 1 --golden " .. mode .. table.concat(args, " ")
        .. " 2>&1; echo \"exit=$?\"")
      -- each file's lines of `mountns run --golden`: each scenario's
      -- verdict and its golden text (what scripts print, and times, left
      -- out): parts[file]; parts.failed: the count of failed scenarios
      -- and files, the markers' included
      local parts, kept, i = { out = out }, nil, 0
      for line in out:gmatch("[^\n]*") do
        if line == "# file " .. tostring(files[i + 1]) then
          i = i + 1
          kept = {}
          parts[files[i]] = kept
        elseif line:find("ERROR " .. marker[i] .. " (", 1, true) == 1 then
          kept.marker = true -- its line and its diagnostic are not the file's
        elseif line:match("^%d+ passed, %d+ failed") then
          parts.failed = tonumber(line:match("(%d+) failed"))
        elseif kept and (line:match("^ok ") or line:match("^%u%u+ ")) then
          kept.marker = nil
          kept[#kept + 1] = (line:gsub(" %(%d+ ms%)$", ""))
        elseif kept and not kept.marker and line:match("^    ") then
          kept[#kept + 1] = line
        end
      end
      for _, file in ipairs(files) do
        if parts[file] then parts[file] = table.concat(parts[file], "\n") end
      end
      runs[mode] = parts
    end
    os.execute("rm -rf " .. dir)
    return runs
  end
  for _, file in ipairs(files) do
    it(file:match("[^/]*$") .. ": the same verdicts and golden texts as on the kernel", function()
      local r = run_all()
      local kernel, got, out = r[""][file], r["--model "][file], r["--model "].out
      assert.truthy(got, out)
      assert.truthy(got:match("^ok "), out) -- it ran, its first scenario passed
      assert.falsy(got:find("\n%u%u+ "), out) -- no FAIL, ERROR, TIMEOUT, SKIP
      assert.are.equal(kernel, got)
      -- no scenario of the run failed: only the markers did
      assert.are.equal(#files, r["--model "].failed, out)
    end)
  end
end)

describe("the model alone", function()
  it("loads and runs where there is no core.so: the article's golden text", function()
    local script = [[
      package.cpath = ""
      package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
      local model = require "mountns.model"
      local format = require "mountns.format"
      assert(not pcall(require, "mountns.core"), "the core was found")
      io.write(model.scenario(function(sh1)
        sh1:make_private("/")
        sh1:mkdir("/X"); sh1:mkdir("/Y")
        sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
        sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
        local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
        sh1:mkdir("/Z"); sh1:bind("/X", "/Z")
        assert(tostring(sh1:mounts()):find("/Z sda3 tmpfs", 1, true))
        return format.golden_text(sh1, sh2)
      end))
    ]]
    local f = assert(io.open(helper.ROOT .. "/build/nocore.lua", "w"))
    f:write(script)
    f:close()
    local out = helper.sh("cd " .. helper.ROOT .. " && " .. helper.LUA .. " build/nocore.lua 2>&1")
    os.remove(helper.ROOT .. "/build/nocore.lua")
    assert.are.equal((out:gsub("\n$", ""))  .. "\n", [[
1 8 0:1 / / rw,relatime
2 1 0:2 / /X rw,relatime shared:1
3 1 0:3 / /Y rw,relatime shared:2
4 1 0:2 / /Z rw,relatime shared:1

5 9 0:1 / / rw,relatime
6 5 0:2 / /X rw,relatime shared:1
7 5 0:3 / /Y rw,relatime shared:2
]])
  end)

  it("a model scenario's namespace is not a kernel one; misuse raises as a scenario's", function()
    model.scenario(function(ns)
      assert.is_true(model.is_namespace(ns))
      assert.has_error(function() ns:exec { "true" } end, "ns:exec: not available in the model")
      assert.has_error(function() ns:mount("x", "/", "tmpfs", "bogus") end,
        "bad argument #4 to 'ns:mount' (unknown flag 'bogus')")
      assert.has_error(function() ns:bind("/", "/", { recursiv = true }) end,
        "bad argument #3 to 'ns:bind' (unknown option 'recursiv')")
    end)
    assert.has_error(function() model.scenario("x", 1) end,
      "bad argument #2 to 'scenario' (function expected, got number)")
    assert.has_error(function() model.scenario(function() end, { timout = 1 }) end,
      "bad argument #2 to 'scenario' (unknown option 'timout')")
  end)

  it("compare: equal worlds, then a diff", function()
    local a, b
    model.scenario(function(ns) ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs"); a = ns end)
    model.scenario(function(ns) ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs"); b = ns end)
    assert.is_true((model.compare({ a }, { b })))
    b:mount("y", "/X", "tmpfs")
    local ok, d = model.compare({ a }, { b })
    assert.is_false(ok)
    assert.truthy(d:find("+3 2 0:3 / /X rw,relatime", 1, true), d)
  end)

  it("replay: recorded steps, the first outcome that differs", function()
    local steps = {
      { ns = 1, op = "mkdir", args = { n = 1, "/X" }, ok = true },
      { ns = 1, op = "mount", args = { n = 3, "x", "/X", "tmpfs" }, ok = true },
      { ns = 1, op = "make_shared", args = { n = 1, "/X" }, ok = true },
      { ns = 1, op = "unshare", args = { n = 1, { propagation = "unchanged" } },
        ok = true, new = 2 },
      { ns = 2, op = "umount", args = { n = 1, "/X" }, ok = true },
      -- the parent of sh2's /X is private: sh1's /X stays
      { ns = 1, op = "umount", args = { n = 1, "/X" }, ok = true },
    }
    local w, nss, diff = model.replay(steps)
    assert.are.equal(2, #model.open_namespaces(w))
    assert.is_nil(nss[2]:find("/X"))
    assert.is_nil(diff)
    steps[6].ok, steps[6].errno = false, "EINVAL"
    local _, _, d2 = model.replay(steps)
    assert.are.equal(6, d2.index)
    assert.is_true(d2.ok)
    -- the one replay (mountns.mirror and explain use it too): the first
    -- namespace's label, a step it cannot follow noted, not a difference
    local labelled = { first_label = "sh1",
      { ns = 1, op = "run", args = { n = 0 }, ok = true, where = "x.lua:3" },
      { ns = 1, op = "mkdir", args = { n = 1, "/X" }, ok = true } }
    local w3, nss3, d3, r3 = model.replay(labelled)
    assert.is_nil(d3)
    assert.are.equal("sh1", nss3[1]:label())
    assert.is_true(nss3[1]:exists("/X"))
    assert.are.equal(w3, r3.world)
    assert.are.same({ "not modelled: ns:run (1 call, first at x.lua:3): a function run in "
      .. "the namespace: its code is not in the step; the tables were compared after it" },
      r3:note_lines())
  end)

  it("events: the call, the copies and where the rules stopped one", function()
    local w
    model.scenario(function(sh1)
      w = sh1.world
      sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
      local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
      sh1:mkdir("/Z"); sh1:bind("/X", "/Z")
      sh1:mkdir("/X/a"); sh1:mount("a", "/X/a", "tmpfs")
      assert(sh2:find("/X/a"))
    end)
    local kinds = {}
    for _, e in ipairs(w.events) do
      kinds[#kinds + 1] = e.kind .. (e.target and (" " .. e.target) or "")
    end
    local text = table.concat(kinds, "\n")
    assert.truthy(text:find("blocked /\n", 1, true), text)       -- /Z under the private /
    assert.truthy(text:find("propagated /X/a", 1, true), text)   -- to sh2
    -- a slave's copy says which master carried it; a copy an umount took,
    -- which relation; a call, its path
    local w2
    model.scenario(function(sh1)
      w2 = sh1.world
      sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
      sh1:unshare { propagation = "slave", label = "sh3" }
      sh1:mkdir("/X/a"); sh1:mount("a", "/X/a", "tmpfs")
      sh1:umount("/X/a")
    end)
    local seen = {}
    for _, e in ipairs(w2.events) do
      seen[#seen + 1] = table.concat({ e.ns, e.kind, tostring(e.target), tostring(e.via) }, " ")
    end
    local all = table.concat(seen, "\n")
    assert.truthy(all:find("ns1 call /X/a nil\n", 1, true), all)
    assert.truthy(all:find("sh3 propagated /X/a master 1", 1, true), all)
    assert.truthy(all:find("sh3 removed /X/a master 1", 1, true), all)
  end)
end)

-- The rules of older kernels (`linux` option): each golden text below is
-- what that kernel did, measured with the same steps in `make matrix`
-- (Debian's 6.1.0-57 and 6.12.118 under qemu, spec 22's comparisons of
-- the same name, December 2026); on this machine the model must reproduce
-- it with that kernel's rules, and differ with 6.18's where 6.18 did.
-- A fresh copy of mountns.model and its parts (mountns.model.rules reads
-- the release), loaded as on a host whose /proc/sys/kernel/osrelease
-- reads `release` (the loaded ones stay).
local function model_loaded_on(release)
  local real_open, loaded = io.open, {}
  io.open = function(path, ...) -- luacheck: ignore
    if path == "/proc/sys/kernel/osrelease" then
      return { read = function() return release end, close = function() end }
    end
    return real_open(path, ...)
  end
  for name, mod in pairs(package.loaded) do
    if name == "mountns.model" or name:find("^mountns%.model%.") then loaded[name] = mod end
  end
  for name in pairs(loaded) do package.loaded[name] = nil end
  local ok, m = pcall(require, "mountns.model")
  io.open = real_open -- luacheck: ignore
  for name in pairs(package.loaded) do
    if name == "mountns.model" or name:find("^mountns%.model%.") then
      package.loaded[name] = loaded[name]
    end
  end
  assert(ok, m)
  return m
end

describe("the model's kernel versions (option linux)", function()
  -- the golden text of the namespaces fn puts in nss, on the model
  -- following linux
  local function on(linux, fn)
    return model.scenario(function(ns)
      local nss = { ns }
      fn(ns, nss)
      local open = {}
      for _, n in ipairs(nss) do if not n.closed then open[#open + 1] = n end end
      return (format.golden_text(unpack(open)):gsub("%s+$", ""))
    end, { linux = linux })
  end

  it("checks the version: a string MAJOR.MINOR[...], 5.10 or newer", function()
    assert.equal("6.12", model.new { linux = "6.12" }.linux)
    assert.equal("6.12", model.new { linux = "6.12.118+deb12-amd64" }.linux)
    assert.equal("7.3", model.new { linux = "7.3" }.linux)
    assert.error_matches(function() model.new { linux = 6.1 } end,
      "bad argument #1 to 'model.new' (option 'linux': a version string such as "
      .. "\"6.12\" expected, got number)", 1, true)
    assert.error_matches(function() model.new { linux = "6.12x" } end,
      "bad argument #1 to 'model.new' (option 'linux': '6.12x' is not a kernel version "
      .. "(MAJOR.MINOR, such as \"6.12\"))", 1, true)
    assert.error_matches(function() model.new { linux = "4.18" } end,
      "bad argument #1 to 'model.new' (option 'linux': Linux 4.18 is older than the oldest "
      .. "kernel the model has rules for (5.10))", 1, true)
    assert.error_matches(function() model.scenario(function() end, { linux = "5.9" }) end,
      "^bad argument #2 to 'scenario' %(option 'linux': Linux 5.9 is older")
    assert.error_matches(function() model.new { linux = "6.12", linx = 1 } end,
      "unknown option 'linx'", 1, true)
  end)

  it("follows the running kernel by default (/proc/sys/kernel/osrelease)", function()
    local kv = helper.kernel_version()
    local v = kv[1] .. "." .. kv[2]
    -- older than the oldest rules (5.10 in make matrix): those, with a note
    if helper.MODEL_PENDING then
      local got, note = model.default_linux()
      assert.equal(model.OLDEST_LINUX, got)
      assert.equal("the running kernel is Linux " .. v .. ", older than the oldest rules the "
        .. "model has: it follows Linux " .. model.OLDEST_LINUX .. "'s", note)
      v = model.OLDEST_LINUX
    end
    assert.equal(v, model.default_linux())
    assert.equal(v, model.new().linux)
    assert.equal(v, model.scenario(function(ns) return ns.world.linux end))
  end)

  it("follows the running kernel in a kernel scenario's child too (no /proc there)", function()
    -- (the version is read when the module loads: a mirror's or a
    -- replay's world is made in the child, whose / is a bare tmpfs, where
    -- a read then would find no release and fall back; the module is
    -- loaded here as on a 6.12 host, so that the fallback shows on 6.18)
    local m = model_loaded_on("6.12.118+deb12-amd64")
    local got, proc = mountns.scenario(function()
      local f = io.open("/proc/sys/kernel/osrelease")
      if f then f:close() end
      return m.new().linux, f ~= nil
    end)
    assert.is_false(proc)
    assert.equal("6.12", got)
  end)

  it("follows 5.10's rules on a kernel older than 5.10, and says so", function()
    -- RHEL 8's kernel: the model has no older rules; a world made
    -- without the option follows the oldest it has, the option raises
    local m = model_loaded_on("4.18.0-553.el8_10.x86_64")
    local v, note = m.default_linux()
    assert.equal("5.10", v)
    assert.matches("Linux 4.18, older than the oldest rules the model has: it follows "
      .. "Linux 5.10's", note, 1, true)
    assert.equal("5.10", m.new().linux)
    assert.is_true(m.new().rules.copy_keeps_unbindable)
    assert.equal("5.10", m.scenario(function(ns) return ns.world.linux end))
    local world = m.replay({})
    assert.equal("5.10", world.linux)
    assert.error_matches(function() m.new { linux = "4.18" } end,
      "option 'linux': Linux 4.18 is older than the oldest kernel", 1, true)
    -- a release it cannot read: the oldest too
    m = model_loaded_on("weird")
    v, note = m.default_linux()
    assert.equal("5.10", v)
    assert.matches('release "weird" is not a version', note, 1, true)
    -- the running kernel's, with no note, from 5.10 on (Ubuntu 22.04's 5.15)
    v, note = model_loaded_on("5.15.0-91-generic").default_linux()
    assert.same({ "5.15" }, { v, note })
  end)

  it("6.1 and 6.12: a namespace copy keeps an unbindable mount unbindable", function()
    local function copy(ns, nss)
      ns:mkdir("/u"); ns:mount("u", "/u", "tmpfs"); ns:make_unbindable("/u")
      nss[2] = ns:unshare { propagation = "unchanged" }
    end
    for _, v in ipairs { "6.1", "6.12" } do
      assert.equal("1 5 0:1 / / rw,relatime\n2 1 0:2 / /u rw,relatime unbindable\n\n"
        .. "3 6 0:1 / / rw,relatime\n4 3 0:2 / /u rw,relatime unbindable", on(v, copy), v)
    end
    assert.equal("1 5 0:1 / / rw,relatime\n2 1 0:2 / /u rw,relatime unbindable\n\n"
      .. "3 6 0:1 / / rw,relatime\n4 3 0:2 / /u rw,relatime", on("6.18", copy))
  end)

  it("6.1: the copies of one propagation are listed last made first", function()
    -- "slaves of one master, made in either order", its first case
    local function slaves(sh1)
      for _, d in ipairs { "/X", "/Y", "/Z", "/W" } do sh1:mkdir(d) end
      sh1:mount("a", "/X", "tmpfs"); sh1:make_shared("/X")
      sh1:mkdir("/X/q"); sh1:mkdir("/X/r")
      sh1:bind("/X", "/Y"); sh1:make_slave("/Y")
      sh1:bind("/X", "/Z"); sh1:make_slave("/Z")
      sh1:mount("b", "/X/q", "tmpfs")
    end
    local measured = [[
1 8 0:1 / / rw,relatime
2 1 0:2 / /X rw,relatime shared:1
3 1 0:2 / /Y rw,relatime master:1
4 1 0:2 / /Z rw,relatime master:1
5 2 0:3 / /X/q rw,relatime shared:2
6 3 0:3 / /Y/q rw,relatime master:2
7 4 0:3 / /Z/q rw,relatime master:2]]
    assert.equal(measured, on("6.1", slaves))
    assert.not_equal(measured, on("6.12", slaves))
  end)

  it("6.1 and 6.12: make-slave picks the first peer with the same root", function()
    -- "make-rslave of binds", as 6.12 did it
    local function rslave(sh1, nss)
      for _, d in ipairs { "/X", "/Y", "/Z", "/W" } do sh1:mkdir(d) end
      sh1:mount("a", "/X", "tmpfs"); sh1:make_shared("/X")
      sh1:mkdir("/X/q"); sh1:mkdir("/X/r")
      sh1:mkdir("/X/sub"); sh1:bind("/X/sub", "/Y")
      nss[2] = sh1:unshare { propagation = "slave" }
      sh1:mount("q", "/X/sub", "tmpfs")
    end
    local measured = [[
1 11 0:1 / / rw,relatime
2 1 0:2 / /X rw,relatime shared:1
3 1 0:2 /sub /Y rw,relatime shared:1
4 2 0:3 / /X/sub rw,relatime shared:2
5 3 0:3 / /Y rw,relatime shared:2

6 12 0:1 / / rw,relatime
7 6 0:2 / /X rw,relatime master:1
8 6 0:2 /sub /Y rw,relatime master:1
9 7 0:3 / /X/sub rw,relatime master:2
10 8 0:3 / /Y rw,relatime master:2]]
    assert.equal(measured, on("6.12", rslave))
    assert.not_equal(measured, on("6.18", rslave))
  end)

  it("6.1 and 6.12: umount propagation before 6.16 keeps a locked copy whose parent goes",
     function()
    -- "a locked copy hidden under a mount that goes stays...", its second
    -- case, as 6.12 did it: the copy of t1 on / (0:2 / /a) stays in ns3
    local function lazy(ns1, nss)
      ns1:mkdir("/a/x")
      ns1:bind("/a", "/a/x")
      local ns2 = ns1:unshare { propagation = "shared" }
      ns2:mount("t1", "/a/x", "tmpfs")
      ns2:bind("/a", "/a", { recursive = true })
      local ns3 = ns2:unshare { propagation = "unchanged", user = true }
      nss[2], nss[3] = ns2, ns3
      ns2:umount("/a", "detach")
    end
    local measured = [[
1 8 0:1 / / rw,relatime
2 1 0:1 /a /a/x rw,relatime

3 9 0:1 / / rw,relatime shared:1

4 10 0:1 / / rw,relatime master:1
5 4 0:1 /a /a/x rw,relatime
6 5 0:2 / /a/x rw,relatime
7 4 0:2 / /a rw,relatime]]
    assert.equal(measured, on("6.12", lazy))
    assert.equal(measured, on("6.1", lazy))
    assert.not_equal(measured, on("6.18", lazy))
  end)

  it("6.1: umount propagation in a peer group of stacked binds, listed in its order", function()
    local function stacked(ns1, nss)
      local ns2 = ns1:unshare { propagation = "shared" }
      nss[1] = ns2
      ns2:mkdir("/a/x/y")
      ns2:bind("/a", "/a/x/y")
      ns2:bind("/a", "/a/x/y")
      ns2:bind("/a/x", "/a")
      ns2:bind("/a", "/a")
      ns2:umount("/a")
    end
    local measured = [[
1 7 0:1 / / rw,relatime shared:1
2 1 0:1 /a /a/x/y rw,relatime shared:1
3 5 0:1 /a/x /a rw,relatime shared:1
4 6 0:1 /a/x /a/x/y rw,relatime shared:1
5 1 0:1 /a/x /a rw,relatime shared:1
6 2 0:1 /a/x /a/x/y rw,relatime shared:1]]
    assert.equal(measured, on("6.1", stacked))
    assert.not_equal(measured, on("6.12", stacked))
  end)

  it("ns:linux(): the rules a namespace follows, for scripts (kernel and model)", function()
    local kv = helper.kernel_version()
    assert.equal(kv[1] .. "." .. kv[2], mountns.scenario(function(ns) return ns:linux() end))
    assert.equal("6.12", model.scenario(function(ns) return ns:unshare():linux() end,
      { linux = "6.12" }))
    -- the example whose expectation changed in 6.17 asks it, so it passes
    -- under every --linux (it read /proc/sys/kernel/osrelease: 5g failed
    -- under --linux 6.1 on 6.18)
    local file = helper.ROOT .. "/examples/copy-unbindable.lua"
    for _, v in ipairs { "6.1", "6.12", "6.18" } do
      assert.matches("ok%s+5g: the copy of an unbindable mount.*\n1 passed, 0 failed\nexit=0$",
        helper.cli("run --model --linux " .. v .. " " .. file))
    end
    assert.error_matches(function()
      model.scenario(function(ns) ns:close(); ns:linux() end)
    end, "attempt to use closed namespace", 1, true)
  end)

  it("mountns run --model --linux V: the scenarios follow V's rules", function()
    local dir = helper.tempdir()
    local file = helper.write(dir, "ub.lua", [[
local mountns = require "mountns"
local expect = require "mountns.expect"
mountns.scenario("copy of an unbindable mount", function(ns)
  ns:mkdir("/u"); ns:mount("u", "/u", "tmpfs"); ns:make_unbindable("/u")
  local copy = ns:unshare { propagation = "unchanged" }
  expect.propagation(copy, "/u", "unbindable")
end)
]])
    assert.matches("ok%s+copy of an unbindable mount.*\nexit=0$",
      helper.cli("run --model --linux 6.12 " .. file))
    assert.matches("FAIL%s+copy of an unbindable mount.*\nexit=1$",
      helper.cli("run --model --linux 6.18 " .. file))
    assert.matches("mountns: run: %-%-linux: Linux 5%.4 is older than the oldest kernel the "
      .. "model has rules for %(5%.10%)\nexit=2$", helper.cli("run --model --linux 5.4 " .. file))
    assert.matches("mountns: run: %-%-linux needs %-%-model .*\nexit=2$",
      helper.cli("run --linux 6.1 " .. file))
    assert.matches("mountns: run: %-%-linux needs a kernel version .*\nexit=2$",
      helper.cli("run --model " .. file .. " --linux"))
    assert.error_matches(function()
      require("mountns.runner").run({ file }, { linux = "6.1" })
    end, "bad argument #2 to 'run' (option 'linux' needs option 'model'", 1, true)
    -- one check of the modes (scenario.run_problem) for run, run_file and the command line
    local scenario = require "mountns.scenario"
    assert.error_matches(function()
      scenario.run_file(file, { linux = "6.1", report = function() end })
    end, "bad argument #2 to 'run_file' (option 'linux' needs option 'model'", 1, true)
    assert.error_matches(function()
      require("mountns.runner").run({ file }, { linux = "5.4", model = true })
    end, "bad argument #2 to 'run' (option 'linux': Linux 5.4 is older than the oldest", 1, true)
    assert.error_matches(function()
      require("mountns.runner").run({ file }, { model = true, both = true })
    end, "bad argument #2 to 'run' (option 'model' and option 'both' exclude each other", 1, true)
    assert.matches("mountns: run: %-%-model and %-%-both exclude each other .*\nexit=2$",
      helper.cli("run --model --both " .. file))
    assert.matches("mountns: run: %-%-linux: '6%.x' is not a kernel version %(MAJOR%.MINOR, "
      .. "such as \"6%.12\"%)\nexit=2$", helper.cli("run --model --linux 6.x " .. file))
    os.execute("rm -rf " .. dir)
  end)
end)
