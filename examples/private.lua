-- Private: no propagation to or from the copy.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("private: nothing crosses", function(sh1)
  sh1:mkdir("/X")
  sh1:mount("x", "/X", "tmpfs")
  sh1:make_shared("/X")
  -- unshare(1)'s default: every mount of the copy is made private
  local sh2 = sh1:unshare { label = "sh2" }
  expect.propagation(sh2, "/X", "private")
  expect.not_peers({ sh1, "/X" }, { sh2, "/X" })

  sh1:mkdir("/X/a"); sh1:mount("a", "/X/a", "tmpfs")
  expect.not_mounted(sh2, "/X/a")
  sh2:mkdir("/X/b"); sh2:mount("b", "/X/b", "tmpfs")
  expect.not_mounted(sh1, "/X/b")
end)
