-- A namespace copy of an unbindable mount. sharedsubtree.rst, 5g "Clone
-- Namespace": "If 'A' is unbindable mount, then 'B' is a unbindable mount
-- too." The kernel copies the mount (a namespace copy copies unbindable
-- mounts, which a bind never does) but, on recent kernels, not its
-- unbindable state: the copy is private (measured: unbindable on 5.10, 6.1
-- and 6.12, private on 6.18, unbindable again on Debian's 7.3). The likely
-- cause: "mount: separate the flags accessed only under namespace_sem"
-- (for 6.17, the first kernel this script expects it on) moved the
-- unbindable flag out of the mount flags that a copy takes from its
-- original; 7.x copies it again (this script expects so from 7.0: 6.19 to
-- 7.1 are not measured). unshare(2) alone is the
-- document's clone: propagation "unchanged" (unshare(1)'s default,
-- "private", makes every mount of the copy private anyway).
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("5g: the copy of an unbindable mount", function(ns)
  -- the rules ns follows: the running kernel's, or the model's --linux V
  local major, minor = ns:linux():match("^(%d+)%.(%d+)")
  local since_6_17 = tonumber(major) == 6 and tonumber(minor) >= 17
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
