-- A rootless container: its mount namespace is owned by a new user
-- namespace, so the kernel applies the rules for less privileged copies
-- (mount_namespaces(7)): the host's shared volume arrives as a slave, the
-- inherited mounts are locked, and nothing the container mounts reaches
-- the host. Works as root and as an unprivileged user.
local mountns = require "mountns"
local expect = require "mountns.expect"
local recipes = require "mountns.recipes"

mountns.scenario("rootless container: slave volume, locked mounts", function(host)
  host:label("host")
  local c = recipes.rootless(host)
  local ctr = c.container
  expect.propagation(ctr, "/vol", "slave")
  expect.slave_of({ ctr, "/vol" }, { host, "/rootfs/vol" })
  expect.locked(ctr, "/vol")
  expect.fails("EINVAL", ctr.umount, ctr, "/vol")

  host:mkdir("/rootfs/vol/h"); host:mount("h", "/rootfs/vol/h", "tmpfs")
  expect.mounted(ctr, "/vol/h")                 -- host -> container
  ctr:mkdir("/vol/c"); ctr:mount("c", "/vol/c", "tmpfs")
  expect.not_mounted(host, "/rootfs/vol/c")     -- never back out
  expect.not_locked(ctr, "/vol/c")              -- its own mounts are not locked
end)
