-- sharedsubtree.rst, section 6 "Quiz", A: a shared mount moved under its own
-- peer. What do /mnt, /mnt/1 and /mnt/1/1 show, all the same, or only /mnt
-- and /mnt/1?
--     mount --bind /mnt /mnt
--     mount --make-shared /mnt
--     mount --bind /mnt /tmp
--     mount --move /tmp /mnt/1
-- The kernel's answer: all three show the same files. /tmp was a peer of
-- /mnt; moved onto /mnt/1 (inside /mnt), the move propagates to /mnt's
-- peers, which now include the moved mount itself: one more copy appears at
-- /mnt/1/1, and every one of the three is in the one peer group.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("quiz A: --move of a peer under its own peer group", function(ns)
  ns:mkdir("/mnt/1"); ns:mkdir("/tmp")
  ns:write("/mnt/file", "on the root filesystem, directory /mnt")

  ns:bind("/mnt", "/mnt")
  ns:make_shared("/mnt")
  ns:bind("/mnt", "/tmp")
  ns:move("/tmp", "/mnt/1")

  expect.not_mounted(ns, "/tmp")
  -- three mounts of one directory, each on the one before, one peer group
  expect.count(ns, "/mnt", 3)
  expect.order(ns, { "/mnt", "/mnt/1", "/mnt/1/1" })
  for _, p in ipairs { "/mnt", "/mnt/1", "/mnt/1/1" } do
    expect.mounted(ns, p, { root = "/mnt" })
  end
  expect.mounted(ns, "/mnt/1/1", { parent = "/mnt/1" })
  expect.peers({ ns, "/mnt" }, { ns, "/mnt/1" }, { ns, "/mnt/1/1" })

  -- so /mnt, /mnt/1 and /mnt/1/1 all show the same directory
  for _, p in ipairs { "/mnt", "/mnt/1", "/mnt/1/1" } do
    assert(table.concat(ns:ls(p), " ") == "1 file", p .. " shows " .. table.concat(ns:ls(p), " "))
  end
  -- and below the third there is no mount: /mnt/1/1/1 is the plain, empty
  -- directory /mnt/1 of the root filesystem
  assert(#ns:ls("/mnt/1/1/1") == 0)
end)
