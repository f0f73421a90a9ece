-- Shared: a mount under one peer propagates to every peer, both ways.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("shared: mounts propagate both ways between peers", function(sh1)
  sh1:mkdir("/X")
  sh1:mount("x", "/X", "tmpfs")
  sh1:make_shared("/X")
  local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
  expect.peers({ sh1, "/X" }, { sh2, "/X" })

  sh1:mkdir("/X/from1"); sh1:mount("one", "/X/from1", "tmpfs")
  expect.mounted(sh2, "/X/from1")          -- sh1 -> sh2
  sh2:mkdir("/X/from2"); sh2:mount("two", "/X/from2", "tmpfs")
  expect.mounted(sh1, "/X/from2")          -- sh2 -> sh1
end)
