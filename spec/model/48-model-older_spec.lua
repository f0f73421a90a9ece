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
-- ENOSYS | 6.12,6.18,7.2,7.3: ok".
local function by_version(fn)
  local groups, index = {}, {}
  for _, v in ipairs(KERNELS) do
    local _, out = helper.side(function(f)
      return model.scenario(f, { linux = v, locked_root = not helper.root })
    end, fn)
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

    kernel_it("on the running kernel", function()
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
