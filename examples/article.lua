-- The seed article, end to end ("Mount namespaces and shared subtrees",
-- Michael Kerrisk, 2016): make / private, shared /X and /Y, a second
-- namespace with --propagation unchanged, bind /X on /Z. Prints both
-- namespaces' mountinfo the way the article shows it (sed 's/ - .*//') and
-- asserts the peer groups, the private roots, and that /Z did not reach sh2.
-- tmpfs mounts named sda3 and sda5 stand in for the article's disks.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("seed article: two peer groups across two namespaces", function(sh1)
  sh1:label("sh1")
  sh1:make_private("/")                               -- mount --make-private /
  sh1:mkdir("/X"); sh1:mkdir("/Y")
  sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X") -- mount --make-shared /dev/sda3 /X
  sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y") -- mount --make-shared /dev/sda5 /Y
  local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
                                                      -- sh2# unshare -m --propagation unchanged sh
  sh1:mkdir("/Z")
  sh1:bind("/X", "/Z")                                -- sh1# mount --bind /X /Z

  for _, ns in ipairs { sh1, sh2 } do
    print(ns:label() .. "# cat /proc/self/mountinfo | sed 's/ - .*//'")
    io.write(mountns.format(ns:mounts(), "article"))
  end

  expect.peers({ sh1, "/X" }, { sh2, "/X" }, { sh1, "/Z" })   -- peer group 1
  expect.peers({ sh1, "/Y" }, { sh2, "/Y" })                  -- peer group 2
  expect.not_peers({ sh1, "/X" }, { sh1, "/Y" })
  expect.propagation(sh1, "/", "private")
  expect.propagation(sh2, "/", "private")
  expect.not_mounted(sh2, "/Z")          -- / is private: the bind did not propagate

  -- The same, as a golden table: IDs renumbered so it reads the same on
  -- every run (the article's 61/81/124/228 and 147/221/224 become 1..7).
  expect.golden([[
1 8 0:1 / / rw,relatime
2 1 0:2 / /X rw,relatime shared:1
3 1 0:3 / /Y rw,relatime shared:2
4 1 0:2 / /Z rw,relatime shared:1

5 9 0:1 / / rw,relatime
6 5 0:2 / /X rw,relatime shared:1
7 5 0:3 / /Y rw,relatime shared:2
]], sh1, sh2)
end)
