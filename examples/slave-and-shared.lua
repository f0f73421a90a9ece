-- Slave-and-shared: a slave that is also a peer of its own group passes
-- what it receives from its master on to its peers.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("slave-and-shared: received events go on to the peers", function(sh1)
  sh1:mkdir("/X")
  sh1:mount("x", "/X", "tmpfs")
  sh1:make_shared("/X")
  local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
  sh2:make_slave("/X")
  sh2:make_shared("/X")                    -- a new group of its own
  local sh3 = sh2:unshare { propagation = "unchanged", label = "sh3" }
  expect.propagation(sh2, "/X", "shared,slave")
  expect.slave_of({ sh2, "/X" }, { sh1, "/X" })
  expect.peers({ sh2, "/X" }, { sh3, "/X" })

  sh1:mkdir("/X/m"); sh1:mount("m", "/X/m", "tmpfs")
  expect.mounted(sh2, "/X/m")
  expect.mounted(sh3, "/X/m")              -- via sh2's peer group
  sh3:mkdir("/X/p"); sh3:mount("p", "/X/p", "tmpfs")
  expect.mounted(sh2, "/X/p")              -- peers share both ways
  expect.not_mounted(sh1, "/X/p")          -- but not up to the master
end)
