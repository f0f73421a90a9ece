-- The model on the older kernels of the matrix (issue 26): what a 5.10 and
-- a 6.1 guest answered otherwise than the model did, each now a rule of
-- mountns.model.rules keyed by version. Each case runs on the model under
-- every version of the matrix and asserts which versions agree (as the
-- kernels' fs/namespace.c and fs/pnode.c read, and as the guests of
-- `make matrix MODEL=1` measured), and runs on the running kernel too,
-- kernel and model compared (helper.same: outcomes and golden texts).
local helper = require "helper"
local mountns = require "mountns"
local model = require "mountns.model"

local KERNELS = { "5.10", "6.1", "6.12", "6.18", "7.2", "7.3" }
local features = mountns.features()

-- The outcomes of fn on the model under each version, grouped: "5.10,6.1:
-- ENOSYS | 6.12,6.18,7.2,7.3: ok"; with what, what(golden text, outcomes)
-- in their place.
local function by_version(fn, what)
  local groups, index = {}, {}
  for _, v in ipairs(KERNELS) do
    local text, out = helper.side(function(f)
      return model.scenario(f, { linux = v, locked_root = not helper.root })
    end, fn)
    if what then out = what(text, out) end
    if not index[out] then
      groups[#groups + 1] = { out = out }
      index[out] = groups[#groups]
    end
    table.insert(index[out], v)
  end
  local parts = {}
  for i, g in ipairs(groups) do parts[i] = table.concat(g, ",") .. ": " .. g.out end
  return table.concat(parts, " | ")
end

describe("the model on older kernels #model #novalgrind", function()
  -- a comparison with the running kernel: pending where the model has no rules
  local kernel_it = helper.model_it

  describe("a call the kernel lacks is ENOSYS naming its release, as the core says", function()
    -- mount_setattr: 5.12; MOVE_MOUNT_BENEATH: 6.5 (the 5.10 and 6.1
    -- guests: "mount_setattr /: Function not implemented (ENOSYS): needs
    -- Linux 5.12", the model answered ok; "move_mount beneath /a /c: ...
    -- needs Linux 6.5", the model answered EINVAL)
    local function setattr(ns, _, try)
      ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs"); ns:mkdir("/A/b")
      try(ns.mount_setattr, ns, "/A", { ro = true, recursive = true })
      try(ns.write, ns, "/A/b/f", "x")          -- EROFS where it worked
    end
    local function beneath(ns, _, try)
      ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
      try(ns.move_mount, ns, ns:fsmount("tmpfs", {}), "/A", { beneath = true })
    end

    it("on the model, by version", function()
      assert.equal("5.10: ENOSYS ok | 6.1,6.12,6.18,7.2,7.3: ok EROFS", by_version(setattr))
      assert.equal("5.10,6.1: ENOSYS | 6.12,6.18,7.2,7.3: ok", by_version(beneath))
    end)

    it("the model's message is the core's, with the core's release", function()
      local core = require "mountns.core"
      assert.same({ mount_setattr = core.feature_since.mount_setattr,
                    beneath = core.feature_since.beneath }, require("mountns.model.rules").SINCE)
      local ns = model.new { linux = "6.1" }:namespace()
      ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
      assert.error_matches(function()
        ns:move_mount(ns:fsmount("tmpfs", {}), "/A", { beneath = true })
      end, "move_mount beneath [fsmount tmpfs] /A: Function not implemented (ENOSYS): needs "
        .. "Linux 6.5", 1, true)
      ns = model.new { linux = "5.10" }:namespace()
      assert.error_matches(function() ns:mount_setattr("/", { nosuid = true }) end,
        "mount_setattr /: Function not implemented (ENOSYS): needs Linux 5.12", 1, true)
      -- misuse still raises first, in the core's words (its luaL_checktype
      -- follows a settop: "got nil")
      assert.error_matches(function() ns:mount_setattr("/") end,
        "bad argument #2 to 'ns:mount_setattr' (table expected, got nil)", 1, true)
    end)

    kernel_it("on the running kernel: mount_setattr", function()
      local _, out = helper.same(setattr)
      assert.equal(features.mount_setattr and "ok EROFS" or "ENOSYS ok", out)
    end)

    kernel_it("on the running kernel: move_mount beneath", function()
      local _, out = helper.same(beneath)
      assert.equal(features.beneath and "ok" or "ENOSYS", out)
    end)
  end)

  describe("the older kernels' order and marks", function()
    -- a clone attached after a later mount: before 6.8 mountinfo lists
    -- the namespace's list, which commit_tree appends the attached tree
    -- to (the 5.10 guest: /A/n before /C; the model listed /C first)
    local function clone(ns, _, try)
      for _, d in ipairs { "/A", "/B", "/C" } do ns:mkdir(d) end
      ns:mount("a", "/A", "tmpfs"); ns:make_shared("/A"); ns:mkdir("/A/n")
      local t = ns:open_tree("/A", { clone = true })
      ns:mount("late", "/A/n", "tmpfs")
      try(ns.move_mount, ns, t, "/B")
      try(ns.move_mount, ns, t, "/C")
      local f = ns:fsmount("tmpfs", {})
      ns:mkdir("/D"); ns:mount("d", "/D", "tmpfs")
      try(ns.move_mount, ns, f, "/B")
    end
    local function order(text)
      local t = {}
      for target in text:gmatch("\n?%d+ %d+ %d+:%d+ %S+ (%S+) ") do t[#t + 1] = target end
      return table.concat(t, " ")
    end

    -- until 6.15 move_mount looks up `from` first and puts it on every way
    -- out: a missing `to` clears `from`'s expire mark (the 5.10 guest:
    -- EAGAIN at the end; the model, as 6.18: ok)
    local function expire(ns, _, try)
      ns:mkdir("/a/x"); ns:bind("/a", "/a/x")
      try(ns.umount, ns, "/a/x", "expire")
      try(ns.move_mount, ns, "/a/x", "/b")      -- ENOENT
      try(ns.umount, ns, "/a/x", "expire")
    end

    it("on the model, by version", function()
      assert.equal("5.10,6.1: / /A /A/n /C /D /B | 6.12,6.18,7.2,7.3: / /A /C /A/n /B /D",
        by_version(clone, order))
      assert.equal("5.10,6.1,6.12: EAGAIN ENOENT EAGAIN | 6.18,7.2,7.3: EAGAIN ENOENT ok",
        by_version(expire))
    end)

    kernel_it("on the running kernel: a clone attached late", function()
      local text, out = helper.same(clone)
      assert.equal("ok ok ok", out)
      assert.equal(helper.kernel_version()[1] * 1000 + helper.kernel_version()[2] < 6008
        and "/ /A /A/n /C /D /B" or "/ /A /C /A/n /B /D", order(text))
    end)

    kernel_it("on the running kernel: an expire mark and a missing target", function()
      local _, out = helper.same(expire)
      assert.equal(model.new().rules.move_from_first and "EAGAIN ENOENT EAGAIN"
        or "EAGAIN ENOENT ok", out)
    end)
  end)

  describe("mount data on the older kernels", function()
    -- the 5.10, 6.1 and 6.12 guests (spec 41): "mand" shown and set anew
    -- by a remount; "=5" judged by tmpfs (EINVAL); ramfs swallowing
    -- "source=x" on 5.10.
    local function data(ns, _, try, note)
      local function show(p)
        local r = ns:find(p)
        note(r and r.target == p and r.super_options or "-")
      end
      ns:mkdir("/s"); ns:mkdir("/e"); ns:mkdir("/r"); ns:mkdir("/m")
      try(ns.mount, ns, "s", "/s", "tmpfs", "sync,mand")
      show("/s")
      try(ns.remount, ns, "/s", "ro")
      show("/s")
      try(ns.mount, ns, "e", "/e", "tmpfs", nil, "=5")
      try(ns.mount, ns, "r", "/r", "ramfs", nil, "source=x")
      try(ns.mount, ns, "m", "/m", "tmpfs", nil, "mand")
      note(ns:find("/m") and ns:find("/m").target == "/m" and ns:find("/m").super_options)
    end
    -- the text without the build's inode64 (fsdata.TMPFS_INODE64) and
    -- (as uid 65534) the owner's IDs
    local function plain(_, out)
      return (out:gsub(",inode64", ""):gsub(",uid=%d+,gid=%d+", ""))
    end

    it("on the model, by version", function()
      -- (as uid 65534 the scenario is in a user namespace: 5.10's EPERM)
      assert.equal((helper.root and "5.10: ok rw,sync,mand ok ro EINVAL ok ok rw,mand"
        or "5.10: EPERM - EINVAL - EINVAL ok ok rw,mand")
        .. " | 6.1,6.12: ok rw,sync,mand ok ro EINVAL EINVAL ok rw,mand"
        .. " | 6.18,7.2,7.3: ok rw,sync ok ro ok EINVAL ok rw", by_version(data, plain))
    end)

    it("mand outside the initial user namespace: EPERM on 5.10 alone", function()
      for _, v in ipairs(KERNELS) do
        local ok, err = pcall(model.scenario, function(ns)
          ns:mkdir("/s")
          local n2 = ns:unshare { user = true }
          n2:mount("s", "/s", "tmpfs", "mand")
        end, { linux = v })
        assert.equal(v ~= "5.10", ok, v .. ": " .. tostring(err))
        if not ok then assert.matches("%(EPERM%)", tostring(err)) end
      end
    end)

    kernel_it("on the running kernel", function()
      helper.same(data)
    end)

    it("the build's inode64 read from mountinfo, both ways", function()
      local fsdata = require "mountns.model.fsdata"
      local y = "30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=4k,inode64\n"
        .. "31 23 0:28 / /a rw,relatime - tmpfs tmpfs rw,inode32\n"
      local n = y .. "32 23 0:29 / /b rw,relatime - tmpfs tmpfs rw,mode=755\n"
      assert.is_true(fsdata.tmpfs_inode64_of(y))
      assert.is_false(fsdata.tmpfs_inode64_of(n))
      assert.is_false(fsdata.tmpfs_inode64_of("1 0 0:1 / / rw - ext4 /dev/sda rw\n"))
      local f = assert(io.open("/proc/self/mountinfo"))
      assert.equal(fsdata.tmpfs_inode64_of(f:read("*a")), fsdata.TMPFS_INODE64)
      f:close()
    end)
  end)

  describe("move_mount beneath a mount whose parent is shared", function()
    -- can_move_mount_beneath's propagation_would_overmount(parent, top,
    -- mp): parent shared and top's root the mount point, and parent
    -- propagating to top (a peer of top or of a master of top), not
    -- merely top's parent. `check --random 100000 --seed 1 --ops 12` on
    -- 6.18, sequence 10633: a private bind of /c under the shared /, the
    -- kernel slid the mount under it (and a copy under the peer's), the
    -- model answered EINVAL.
    local function steps(ns1, nss, try)
      ns1:mkdir("/c"); ns1:bind("/c", "/c")       -- private: / is not yet shared
      ns1:mkdir("/b"); ns1:mount("t1", "/b", "tmpfs")
      ns1:make_shared("/")
      local ns2 = ns1:unshare { propagation = "unchanged" }
      nss[2] = ns2
      ns2:mount("t2", "/b", "tmpfs")
      try(ns2.move_mount, ns2, "/b", "/c", { beneath = true })
      ns2:mkdir("/d"); ns2:bind("/d", "/d")       -- a peer of / (now shared)
      ns2:mkdir("/e"); ns2:mount("t3", "/e", "tmpfs")
      try(ns2.move_mount, ns2, "/e", "/d", { beneath = true })
    end

    it("on the model, by version", function()
      assert.equal("5.10,6.1: ENOSYS ENOSYS | 6.12,6.18,7.2,7.3: ok EINVAL", by_version(steps))
    end)

    helper.model_it("on the running kernel", function()
      if not features.beneath then return pending("this kernel lacks MOVE_MOUNT_BENEATH") end
      local text, out = helper.same(steps)
      assert.equal("ok EINVAL", out)
      -- ns1's /c: the copy of t2 under the private bind, which sits on it
      local copy = text:match("\n(%d+) %d+ 0:%d+ / /c rw,relatime shared:%d+\n")
      assert.truthy(copy, text)
      assert.truthy(text:find("\n%d+ " .. copy .. " 0:%d+ /c /c rw,relatime\n"), text)
    end)
  end)
end)
