-- Containers: the kernel's rules for a mount namespace owned by a less
-- privileged user namespace (mount_namespaces(7), "Restrictions on mount
-- namespaces"), ns:locked, and the recipes, against the real kernel.
local mountns = require "mountns"
local expect = require "mountns.expect"
local recipes = require "mountns.recipes"
local helper = require "helper"

local scenario = mountns.scenario

-- /X shared with a bind peer /Z, /R read-only and nosuid, then a copy of
-- the namespace owned by a new user namespace
local function less_privileged(sh1)
  sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mkdir("/Z"); sh1:bind("/X", "/Z")
  sh1:mkdir("/R"); sh1:mount("r", "/R", "tmpfs", "ro,nosuid")
  return sh1:unshare { user = true, propagation = "unchanged", label = "userns" }
end

describe("user-namespace rules", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  it("a shared mount becomes a slave of its old peer group", function()
    local group, x = scenario(function(sh1)
      local u = less_privileged(sh1)
      return sh1:find("/X").shared, u:find("/X")
    end)
    assert.are.equal("slave", x.propagation)
    assert.are.equal(group, x.master)
    assert.is_nil(x.shared)
  end)

  it("former peers are not peers there", function()
    local x, z = scenario(function(sh1)
      local u = less_privileged(sh1)
      expect.not_peers({ u, "/X" }, { u, "/Z" })
      return u:find("/X"), u:find("/Z")
    end)
    assert.is_nil(x.shared)
    assert.is_nil(z.shared)
    assert.are.equal(x.master, z.master)
  end)

  it("propagation runs from the parent namespace in, not back out", function()
    local inward, outward = scenario(function(sh1)
      local u = less_privileged(sh1)
      u:mkdir("/X/in"); u:mount("in", "/X/in", "tmpfs")
      sh1:mkdir("/X/out"); sh1:mount("out", "/X/out", "tmpfs")
      return u:find("/X/out") ~= nil, sh1:find("/X/in") ~= nil
    end)
    assert.is_true(inward)
    assert.is_false(outward)
  end)

  it("inherited mounts are locked: umount and move fail with EINVAL", function()
    local r = scenario(function(sh1)
      local u = less_privileged(sh1)
      u:mkdir("/own"); u:mount("own", "/own", "tmpfs")
      u:mkdir("/dest")
      local out = {
        x = u:locked("/X"), own = u:locked("/own"), parent = sh1:locked("/X"),
        umount = expect.fails("EINVAL", u.umount, u, "/X"),
        move = expect.fails("EINVAL", u.move, u, "/X", "/dest"),
      }
      u:umount("/own") -- made inside: not locked
      out.own_gone = u:find("/own") == nil
      out.still = u:find("/X") ~= nil
      expect.locked(u, "/X")
      expect.not_locked(sh1, "/X")
      return out
    end)
    assert.is_true(r.x)
    assert.is_false(r.own)
    assert.is_false(r.parent)
    assert.truthy(r.umount:match("^umount /X: Invalid argument %(EINVAL%)"))
    assert.truthy(r.move:match("^move /X /dest: Invalid argument %(EINVAL%)"))
    assert.is_true(r.own_gone)
    assert.is_true(r.still)
  end)

  it("locked probes leave the namespace as it was", function()
    local before, after = scenario(function(sh1)
      local u = less_privileged(sh1)
      local b = mountns.format(u:mounts(), "mountinfo")
      u:locked("/X"); u:locked("/Z"); u:locked("/R")
      return b, mountns.format(u:mounts(), "mountinfo")
    end)
    assert.are.equal(before, after)
  end)

  it("core.umount_copy detaches in a private copy: the caller's namespace and the "
    .. "shared peer keep the mount; a locked one gives EINVAL, a failure names the path",
    function()
    local core = require "mountns.core"
    local r = scenario(function(sh1)
      sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
      sh1:mkdir("/X/sub"); sh1:mount("sub", "/X/sub", "tmpfs")
      local peer = sh1:unshare { propagation = "unchanged" }
      local u = sh1:unshare { user = true, propagation = "unchanged" }
      local out = { copy = { sh1:run(core.umount_copy, "/X/sub") } }
      out.still_here = sh1:mounts():find("/X/sub") ~= nil
      out.still_in_peer = peer:mounts():find("/X/sub") ~= nil
      -- through u's agent: a process of u's user namespace
      out.locked = { u.agent:call(u.serial, "call", "umount_copy", "/X") }
      out.missing = { sh1:run(core.umount_copy, "/nowhere") }
      return out
    end)
    assert.are.same({ true }, r.copy)
    assert.is_true(r.still_here)
    assert.is_true(r.still_in_peer)
    assert.is_nil(r.locked[1])
    assert.are.equal(core.errno.EINVAL, r.locked[3])
    assert.truthy(r.locked[2]:find("^umount /X: .*%(EINVAL%)$"), r.locked[2])
    assert.are.equal(core.errno.ENOENT, r.missing[3])
    assert.truthy(r.missing[2]:find("^umount /nowhere: "), r.missing[2])
  end)

  it("a subtree that arrived by propagation is locked as a unit", function()
    local r = scenario(function(sh1)
      local u = less_privileged(sh1)
      sh1:mkdir("/T"); sh1:mount("t", "/T", "tmpfs")
      sh1:mkdir("/T/sub"); sh1:mount("sub", "/T/sub", "tmpfs")
      sh1:mkdir("/X/tree")
      sh1:bind("/T", "/X/tree", { recursive = true }) -- propagates into u
      expect.mounted(u, "/X/tree/sub")
      local out = { sub = u:locked("/X/tree/sub"), top = u:locked("/X/tree"),
                    err = expect.fails("EINVAL", u.umount, u, "/X/tree/sub") }
      u:umount("/X/tree", "detach") -- the whole unit can go
      out.gone = u:find("/X/tree") == nil and u:find("/X/tree/sub") == nil
      return out
    end)
    assert.is_true(r.sub)
    assert.is_false(r.top)
    assert.truthy(r.err:match("umount /X/tree/sub: Invalid argument %(EINVAL%)"))
    assert.is_true(r.gone)
  end)

  it("locked ro and nosuid cannot be cleared (EPERM)", function()
    local ro, nosuid, kept = scenario(function(sh1)
      local u = less_privileged(sh1)
      local e1 = expect.fails("EPERM", u.remount, u, "/R", "nosuid", nil, { bind = true })
      local e2 = expect.fails("EPERM", u.remount, u, "/R", "ro", nil, { bind = true })
      u:remount("/R", "ro,nosuid,nodev", nil, { bind = true }) -- adding is allowed
      return e1, e2, u:find("/R").options
    end)
    assert.truthy(ro:match("remount /R: Operation not permitted %(EPERM%)"))
    assert.truthy(nosuid:match("%(EPERM%)"))
    assert.truthy(kept:match("^ro,nosuid,nodev"))
  end)

  it("later unshares stay in that user namespace unless asked again", function()
    local r = scenario(function(sh1)
      local u = less_privileged(sh1)
      local same = u:unshare { propagation = "unchanged" }
      local nested = u:unshare { user = true, propagation = "unchanged" }
      local uid = function(ns) local h = ns:userns(); local id = h:id(); h:close(); return id end
      return { same = uid(same) == uid(u), nested = uid(nested) ~= uid(u),
               host = uid(u) ~= uid(sh1), same_locked = same:locked("/X"),
               same_prop = same:find("/X").propagation }
    end)
    assert.is_true(r.same)
    assert.is_true(r.nested)
    assert.is_true(r.host)
    assert.is_true(r.same_locked)
    assert.are.equal("slave", r.same_prop)
  end)

  it("ns:locked raises for a path that is not a mount", function()
    local err, on_mount, direct = scenario(function(sh1)
      local u = less_privileged(sh1)
      sh1:mkdir("/X/sub")
      -- a directory on a mount: statmount finds /X's mount, not one at the path
      return select(2, pcall(u.locked, u, "/nowhere")), select(2, pcall(u.locked, u, "/X/sub")),
        select(2, pcall(sh1.locked, sh1, "/X/sub"))
    end)
    assert.truthy(err:match("locked /nowhere: not a mount point"))
    assert.truthy(on_mount:match("locked /X/sub: not a mount point"), on_mount)
    assert.truthy(direct:match("locked /X/sub: not a mount point"), direct)
  end)
end)

describe("recipes", function()
  -- what crosses, per rootfs propagation mode (runc's rootfsPropagation)
  local function crossing(mode, user)
    return scenario(function(host)
      local c = recipes.rootfs(host, { propagation = mode, user = user })
      host:mkdir(c.host_volume .. "/h"); host:mount("h", c.host_volume .. "/h", "tmpfs")
      c.container:mkdir(c.container_volume .. "/c")
      c.container:mount("c", c.container_volume .. "/c", "tmpfs")
      local t = c.container:mounts()
      return { root = t:find("/").fstype, down = t:find("/vol/h") ~= nil,
               up = host:find("/rootfs/vol/c") ~= nil, vol = t:find("/vol").propagation,
               n = #t }
    end)
  end

  it("rootfs pivots the container into the rootfs bind", function()
    local r = crossing("rslave")
    assert.are.equal("tmpfs", r.root)
    assert.are.equal(4, r.n) -- /, /vol and the two test mounts: nothing else
  end)

  it("rootfs propagation modes decide what the volume passes", function()
    local want = {
      private = { "shared", true, true }, rprivate = { "private", false, false },
      shared = { "shared", true, true }, rshared = { "shared", true, true },
      slave = { "shared", true, true }, rslave = { "slave", true, false },
    }
    for mode, w in pairs(want) do
      local r = crossing(mode)
      assert.are.same(w, { r.vol, r.down, r.up }, mode)
    end
  end)

  it("rootless: the shared volume arrives as a slave, locked", function()
    local r = scenario(function(host)
      local c = recipes.rootless(host)
      host:mkdir("/rootfs/vol/h"); host:mount("h", "/rootfs/vol/h", "tmpfs")
      expect.slave_of({ c.container, "/vol" }, { host, "/rootfs/vol" })
      expect.locked(c.container, "/vol")
      expect.mounted(c.container, "/vol/h")
      return c.container:find("/vol").propagation
    end)
    assert.are.equal("slave", r)
  end)

  it("kubernetes mountPropagation: None, HostToContainer, Bidirectional", function()
    local want = { None = { false, false }, HostToContainer = { true, false },
                   Bidirectional = { true, true } }
    for mode, w in pairs(want) do
      local r = scenario(function(host)
        local k = recipes.kubernetes(host, mode)
        host:mkdir(k.host_volume .. "/h"); host:mount("h", k.host_volume .. "/h", "tmpfs")
        k.container:mkdir(k.container_volume .. "/c")
        k.container:mount("c", k.container_volume .. "/c", "tmpfs")
        return { k.container:find(k.container_volume .. "/h") ~= nil,
                 host:find(k.host_volume .. "/c") ~= nil }
      end)
      assert.are.same(w, r, mode)
    end
  end)

  it("rejects unknown modes", function()
    local e1, e2 = scenario(function(host)
      return select(2, pcall(recipes.rootfs, host, { propagation = "sideways" })),
        select(2, pcall(recipes.kubernetes, host, "Sometimes"))
    end)
    assert.truthy(e1:match("unknown propagation mode 'sideways'"))
    assert.truthy(e2:match("unknown mountPropagation 'Sometimes'"))
  end)

  it("work for an unprivileged user (uid 65534)", function()
    local out = helper.sh(helper.unpriv_cmd() .. [[ -e '
        local m = require "mountns"
        local recipes = require "mountns.recipes"
        print(m.scenario(function(host)
          local c = recipes.rootless(host)
          host:mkdir("/rootfs/vol/h"); host:mount("h", "/rootfs/vol/h", "tmpfs")
          return c.container:find("/vol").propagation, c.container:find("/vol/h") ~= nil,
            c.container:locked("/vol")
        end))' 2>&1]])
    assert.are.equal("slave\ttrue\ttrue", out)
  end)
end)
