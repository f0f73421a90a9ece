-- sharedsubtree.rst (the kernel's Documentation/filesystems), FAQ 3 "Why is
-- unbindable mount needed?": rbind a shared tree into a directory of
-- itself, again and again. The document counts 2, 6 and then "I won't draw
-- the tree..but it has 24 vfsmounts" ("at step i the number of vfsmounts
-- is V[i] = i*V[i-1]"). The kernel makes 42 at step 4 (6.1, 6.12, 6.18):
-- each rbind adds a copy of the V mounts of the tree, and the copy
-- propagates to the V - 1 other members of the root's peer group (every
-- mount here is a view of the root), each of which gets the V mounts too:
-- V + V + (V - 1)*V = V*(V + 1) (2, 6, 42, 1806). The document's root
-- tree "root" with tmp and usr is the scenario's / (its /tmp/m1 is inside
-- it). With /tmp bound on itself and made unbindable (the document's cure)
-- each step adds one mount: 2, 3, 4, 5.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("sharedsubtree.rst FAQ 3: 2, 6, then 42 vfsmounts, not 24", function(ns)
  mountns.shell(ns, [[
# mkdir /tmp /usr
# mount --make-shared /
# mkdir -p /tmp/m1
# mount --rbind / /tmp/m1
]])
  expect.count(ns, "/", 2)                       -- "it has two vfsmounts"
  mountns.shell(ns, [[
# mkdir -p /tmp/m2
# mount --rbind / /tmp/m2
]])
  expect.count(ns, "/", 6)                       -- "it has 6 vfsmounts"
  mountns.shell(ns, [[
# mkdir -p /tmp/m3
# mount --rbind / /tmp/m3
]])
  expect.count(ns, "/", 42)                      -- the document: 24
  -- all of them views of the one root, in its peer group
  local t = ns:mounts()
  for _, m in ipairs(t) do
    assert(m.root == "/" and m.shared == t:find("/").shared, m.target .. " is not a peer of /")
  end
  -- the document's step-3 tree, a branch it does not draw: m1 inside m2's copy
  expect.mounted(ns, "/tmp/m2/tmp/m1", { root = "/" })
  expect.mounted(ns, "/tmp/m1/tmp/m2/tmp/m1", { root = "/" })
end)

mountns.scenario("sharedsubtree.rst FAQ 3 with an unbindable /tmp: 2, 3, 4, 5", function(ns)
  mountns.shell(ns, [[
# mkdir /tmp /usr
# mount --bind /tmp /tmp
# mount --make-rshared /
# mount --make-unbindable /tmp
# mkdir -p /tmp/m1
# mount --rbind / /tmp/m1
]])
  expect.count(ns, "/", 3)
  mountns.shell(ns, [[
# mkdir -p /tmp/m2
# mount --rbind / /tmp/m2
# mkdir -p /tmp/m3
# mount --rbind / /tmp/m3
]])
  expect.count(ns, "/", 5)
  -- the document's last tree: m1, m2, m3 each a copy of root with its
  -- plain tmp and usr, nothing mounted below them
  for _, m in ipairs { "/tmp/m1", "/tmp/m2", "/tmp/m3" } do
    expect.mounted(ns, m, { parent = "/tmp" })
    expect.peers({ ns, "/" }, { ns, m })
    expect.count(ns, m, 1)
  end
  expect.propagation(ns, "/tmp", "unbindable")
end)
