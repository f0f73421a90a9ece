-- Unbindable: private, and cannot be the source of a bind mount; an rbind
-- skips unbindable submounts (the cure for bind-mount explosions).
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("unbindable: no bind from it, rbind prunes it", function(ns)
  ns:mkdir("/U"); ns:mkdir("/copy"); ns:mkdir("/tree/sub"); ns:mkdir("/tree2")
  ns:mount("u", "/U", "tmpfs")
  ns:make_unbindable("/U")
  expect.propagation(ns, "/U", "unbindable")
  expect.fails("EINVAL", ns.bind, ns, "/U", "/copy")

  ns:mount("tree", "/tree", "tmpfs")
  ns:mkdir("/tree/sub")
  ns:mount("sub", "/tree/sub", "tmpfs")
  ns:make_unbindable("/tree/sub")
  ns:bind("/tree", "/tree2", { recursive = true })
  expect.mounted(ns, "/tree2")
  expect.not_mounted(ns, "/tree2/sub")
end)
