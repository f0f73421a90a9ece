-- A namespace copy of an unbindable mount. sharedsubtree.rst, 5g "Clone
-- Namespace": "If 'A' is unbindable mount, then 'B' is a unbindable mount
-- too." The kernel copies the mount (a namespace copy copies unbindable
-- mounts, which a bind never does) but, on some kernels, not its
-- unbindable state: the copy is private (measured: unbindable on 5.10, 6.1
-- and 6.12, private on 6.18, unbindable again on Debian's 7.2.13 and 7.3).
-- The cause, in the sources: "mount: separate the flags accessed only
-- under namespace_sem" (6.17) moved the unbindable flag out of the mount
-- flags that clone_mnt copies; 7.2.13 and 7.3's clone_mnt copies it
-- (T_UNBINDABLE) again, 7.1.8 and 7.2.8's do not. This script expects a
-- private copy from 6.17 to 7.1 (for 7.2 it expects Debian's 7.2.13).
-- unshare(2) alone is the document's clone: propagation "unchanged"
-- (unshare(1)'s default, "private", makes every mount of the copy private
-- anyway).
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("5g: the copy of an unbindable mount", function(ns)
  -- the rules ns follows: the running kernel's, or the model's --linux V
  local major, minor = ns:linux():match("^(%d+)%.(%d+)")
  local v = tonumber(major) * 1000 + tonumber(minor)
  local since_6_17 = v >= 6017 and v < 7002
  ns:mkdir("/u"); ns:mkdir("/s")
  ns:mount("u", "/u", "tmpfs")
  ns:make_unbindable("/u")
  ns:mount("s", "/s", "tmpfs")
  ns:make_shared("/s")

  local copy = ns:unshare { propagation = "unchanged", label = "copy" }
  expect.peers({ ns, "/s" }, { copy, "/s" })           -- the document's shared row holds
  expect.mounted(copy, "/u", { source = "u" })         -- the mount is copied
  expect.propagation(ns, "/u", "unbindable")
  if since_6_17 then
    expect.propagation(copy, "/u", "private")          -- the document: unbindable
    copy:mkdir("/v"); copy:bind("/u", "/v")            -- so it can be bound there
    expect.mounted(copy, "/v", { source = "u" })
  else
    expect.propagation(copy, "/u", "unbindable")
    expect.fails("EINVAL", copy.bind, copy, "/u", "/s")
  end
end)
