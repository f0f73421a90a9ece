-- pivot_root hands the old root's lock to the new root (found by
-- `mountns check`, doc/kernel-vs-docs.md). In a less privileged mount
-- namespace (one owned by a new user namespace) every mount it inherited
-- is locked: it cannot be unmounted or moved there. A mount the namespace
-- makes itself is not locked, until pivot_root makes it the root: then it
-- is locked as the old root was, and cannot be unmounted or moved either
-- (as root, without a user namespace, the same root moves into itself:
-- ELOOP, and unmounts).
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("pivot_root hands the old root's lock to the new root", function(sh1)
  sh1:label("sh1")
  sh1:mkdir("/new")
  local sh2 = sh1:unshare { user = true, label = "sh2" } -- less privileged
  expect.locked(sh2, "/")                    -- inherited: locked
  sh2:mount("mine", "/new", "tmpfs")
  expect.not_locked(sh2, "/new")             -- made in sh2: not locked
  sh2:pivot_root("/new")                     -- the old root is detached
  expect.locked(sh2, "/")                    -- sh2's own tmpfs, locked now
  sh2:mkdir("/x")
  expect.fails("EINVAL", sh2.move, sh2, "/", "/x")
  expect.fails("EINVAL", sh2.umount, sh2, "/", "detach")
end)
