-- A container rootfs built the way runc builds it, for each rootfs
-- propagation mode (Docker's bind propagation modes): does a volume mount
-- made on the host reach the container, and does one made in the
-- container reach the host? (The non-recursive modes only touch the rootfs
-- bind itself: the volume below it keeps the host's peer group.)
local mountns = require "mountns"
local expect = require "mountns.expect"
local recipes = require "mountns.recipes"

local crosses = { -- mode: host -> container, container -> host
  private = { true, true }, rprivate = { false, false },
  shared = { true, true }, rshared = { true, true },
  slave = { true, true }, rslave = { true, false },
}

for _, mode in ipairs { "private", "rprivate", "shared", "rshared", "slave", "rslave" } do
  mountns.scenario("rootfs propagation " .. mode, function(host)
    host:label("host")
    local c = recipes.rootfs(host, { propagation = mode })
    local ctr = c.container
    host:mkdir("/rootfs/vol/from-host"); host:mount("h", "/rootfs/vol/from-host", "tmpfs")
    ctr:mkdir("/vol/from-ctr"); ctr:mount("c", "/vol/from-ctr", "tmpfs")
    local down, up = crosses[mode][1], crosses[mode][2]
    ;(down and expect.mounted or expect.not_mounted)(ctr, "/vol/from-host")
    ;(up and expect.mounted or expect.not_mounted)(host, "/rootfs/vol/from-ctr")
  end)
end
