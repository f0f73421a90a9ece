-- sharedsubtree.rst, 5f "Unmount semantics": B1, B2 and B3 are peers; A1,
-- A2, A3 are mounted at b on each, then C1, C2, C3 on top. "if 'C1' is
-- unmounted, all the mounts that are most-recently-mounted on 'B1' and on
-- the mounts that 'B1' propagates-to are unmounted. ... If any of 'C2' or
-- 'C3' has some child mounts, then that mount is not unmounted, but all
-- other mounts are unmounted."
-- The kernel (6.1, 6.12, 6.18) keeps C2 when its child is below its root,
-- but a child mounted on C3's root does not keep C3: C3 is unmounted and
-- the child takes its place, on A3 (Linux 4.11, "mnt: Tuck mounts under
-- others instead of creating shadow/side mounts.").
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("5f: umount C1; C2 has a child below its root, C3 one on its root", function(ns)
  mountns.shell(ns, [[
# mkdir /B1 /B2 /B3
# mount -t tmpfs B /B1
# mount --make-shared /B1
# mkdir /B1/b
# mount --bind /B1 /B2
# mount --bind /B1 /B3
# mount -t tmpfs A /B1/b
# mount -t tmpfs C /B1/b
# mkdir /B1/b/x
]])
  expect.stack(ns, "/B2/b", { "A", "C" })
  expect.stack(ns, "/B3/b", { "A", "C" })
  -- a child on C2 (at x) and one on C3's root; C2 and C3 made private
  -- first, so that neither propagates to the other Cs
  mountns.shell(ns, [[
# mount --make-private /B2/b
# mount -t tmpfs X /B2/b/x
# mount --make-private /B3/b
# mount -t tmpfs O /B3/b
]])
  expect.stack(ns, "/B3/b", { "A", "C", "O" })
  ns:umount("/B1/b")

  expect.stack(ns, "/B1/b", { "A" })
  expect.stack(ns, "/B2/b", { "A", "C" })                -- C2 stays: the document
  expect.mounted(ns, "/B2/b/x", { source = "X" })
  expect.stack(ns, "/B3/b", { "A", "O" })                -- the document: C3 stays
  expect.mounted(ns, "/B3/b", { source = "O", parent = ns:mounts():stack("/B3/b")[1] })
end)
