-- sharedsubtree.rst, section 6 "Quiz", C: a chain of slaves whose middle
-- one cannot receive the mount. A (/tmp, root dentry 1) -> B (/tmp1, root
-- dentry 1/2) -> C (/mnt, root dentry mnt):
--     mount --bind /mnt /mnt
--     mount --make-shared /mnt
--     mkdir -p /mnt/1/2/3 /mnt/1/test
--     mount --bind /mnt/1 /tmp
--     mount --make-slave /mnt
--     mount --make-shared /mnt
--     mount --bind /mnt/1/2 /tmp1
--     mount --make-slave /mnt
--     mount --bind /bin /tmp/test
-- Does the mount on A propagate to B and C; what is in /mnt/1/test?
-- The kernel's answer: B has no 1/test below its root, so it gets nothing;
-- C, B's slave, gets the mount all the same: /mnt/1/test shows /bin.
-- (The scenario's / is a bare tmpfs: /bin here is a tmpfs holding "ls".)
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("quiz C: propagation skips a slave that lacks the mount point", function(ns)
  for _, d in ipairs { "/mnt", "/tmp", "/tmp1", "/bin" } do ns:mkdir(d) end
  ns:mount("bin", "/bin", "tmpfs"); ns:write("/bin/ls", "")

  ns:bind("/mnt", "/mnt")
  ns:make_shared("/mnt")
  ns:mkdir("/mnt/1/2/3"); ns:mkdir("/mnt/1/test")
  ns:bind("/mnt/1", "/tmp")
  ns:make_slave("/mnt")
  ns:make_shared("/mnt")
  ns:bind("/mnt/1/2", "/tmp1")
  ns:make_slave("/mnt")

  -- the chain the quiz describes: A -> B -> C
  expect.mounted(ns, "/tmp", { root = "/mnt/1" })        -- A
  expect.mounted(ns, "/tmp1", { root = "/mnt/1/2" })     -- B
  expect.mounted(ns, "/mnt", { root = "/mnt" })          -- C
  expect.propagation(ns, "/tmp", "shared")
  expect.propagation(ns, "/tmp1", "shared,slave", { master = { ns, "/tmp" } })
  expect.propagation(ns, "/mnt", "slave", { master = { ns, "/tmp1" } })

  ns:bind("/bin", "/tmp/test")                           -- attempted on A

  expect.count(ns, "/tmp1", 1)                           -- B: nothing new
  expect.mounted(ns, "/mnt/1/test", { source = "bin", parent = "/mnt" })
  expect.slave_of({ ns, "/mnt/1/test" }, { ns, "/tmp/test" })
  assert(table.concat(ns:ls("/mnt/1/test"), " ") == "ls")
  assert(table.concat(ns:ls("/tmp1"), " ") == "3")
end)
