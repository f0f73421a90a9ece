-- A namespace whose root mount has another mount stacked on its "/" (a
-- system booted through an initramfs: the real root on the rootfs; here a
-- tmpfs mounted on "/"). Its table read from outside is cut to what a
-- process that enters it sees (mounts.lua, from_entered_root), and that
-- cut must follow the tree, not listmount's order: propagation tucks the
-- mount that was at a mount point onto the copy made there
-- (attach_recursive_mnt), so a child can have a smaller mount ID than its
-- parent. Walking the list once lost those mounts and everything on them:
-- in the vm/ guests (whose / is an overlay on the initramfs) 5 comparisons
-- of the model against Debian's 7.2 and 7.3 failed for that reason alone.
local mountns = require "mountns"

-- binds on /a/x/y whose copies tuck mounts under others
local function tuck(ns)
  ns:mkdir("/a/x/y")
  ns:bind("/a", "/a/x/y"); ns:bind("/a", "/a/x/y"); ns:bind("/a/x", "/a")
end

-- the records' targets, sorted, one per line
local function targets(t)
  local out = {}
  for _, m in ipairs(t) do out[#out + 1] = m.target .. " " .. m.root end
  table.sort(out)
  return table.concat(out, "\n")
end

describe("a namespace with a mount stacked on its root", function()
  for _, stacked in ipairs { true, false } do
    it((stacked and "stacked" or "not stacked") .. ": read from outside, every mount a "
       .. "process there sees, tucked ones too", function()
      local outside, inside, tucked = mountns.scenario(function(ns1)
        local ns2 = ns1:unshare { propagation = "shared" }
        if stacked then ns2:mount("top", "/", "tmpfs") end
        local ns3 = ns2:unshare { propagation = "shared" }
        tuck(ns3)
        local t = ns3:mounts()
        local from_inside = ns3:run(function()
          local m = require "mountns"
          local own = m.mounts()
          local lines = {}
          for _, r in ipairs(own) do lines[#lines + 1] = r.target .. " " .. r.root end
          table.sort(lines)
          return table.concat(lines, "\n")
        end)
        -- a mount whose parent came later in the list: the case is there
        local pos, later = {}, 0
        for i, r in ipairs(t) do pos[r.id] = i end
        for i, r in ipairs(t) do
          if pos[r.parent_id] and pos[r.parent_id] > i then later = later + 1 end
        end
        return targets(t), from_inside, later
      end)
      assert.equal(inside, outside)
      local n = select(2, outside:gsub("\n", "")) + 1
      assert.equal(8, n, outside) -- the root (or the mount on it) and 7
      -- (on mountinfo, before listmount, the order is the same: by ID)
      assert.is_true(tucked > 0, "no mount listed before its parent: the case is not made")
    end)
  end
end)
