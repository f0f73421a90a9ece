-- Slave: events flow from the master peer group to the slave, not back.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("slave: one-way propagation", function(sh1)
  sh1:mkdir("/X")
  sh1:mount("x", "/X", "tmpfs")
  sh1:make_shared("/X")
  local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
  sh2:make_slave("/X")
  expect.propagation(sh2, "/X", "slave")
  expect.slave_of({ sh2, "/X" }, { sh1, "/X" })

  sh1:mkdir("/X/down"); sh1:mount("down", "/X/down", "tmpfs")
  expect.mounted(sh2, "/X/down")           -- master -> slave
  sh2:mkdir("/X/up"); sh2:mount("up", "/X/up", "tmpfs")
  expect.not_mounted(sh1, "/X/up")         -- slave -/-> master
end)
