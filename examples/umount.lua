-- Umount propagation: unmounting under a shared mount unmounts the
-- propagated copies in every peer; a slave's own mounts stay.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("umount propagates to peers and slaves", function(sh1)
  sh1:mkdir("/X")
  sh1:mount("x", "/X", "tmpfs")
  sh1:make_shared("/X")
  local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
  local sh3 = sh1:unshare { propagation = "slave", label = "sh3" }
  sh1:mkdir("/X/m"); sh1:mount("m", "/X/m", "tmpfs")
  expect.mounted(sh2, "/X/m")
  expect.mounted(sh3, "/X/m")

  sh2:umount("/X/m")                       -- from a peer, not the origin
  expect.not_mounted(sh1, "/X/m")
  expect.not_mounted(sh3, "/X/m")
end)
