-- The seed article's session ("Mount namespaces and shared subtrees",
-- Michael Kerrisk, 2016), pasted verbatim and run by mountns.shell: the
-- prompts say which terminal (sh1, sh2) types each command; the mountinfo
-- lines under each `cat` are what the article's machine printed, and
-- mountns prints its own. /X and /Y did not exist in the scenario's fresh
-- root: mountns makes them (the article's machine had them), and
-- /dev/sda3 and /dev/sda5 without -t stand for tmpfs mounts of that name.
local mountns = require "mountns"
local expect = require "mountns.expect"
local format = require "mountns.format"

local session = [[
sh1# mount --make-private /
sh1# mount --make-shared /dev/sda3 /X
sh1# mount --make-shared /dev/sda5 /Y
sh2# unshare -m --propagation unchanged sh
sh1# mkdir /Z
sh1# mount --bind /X /Z
sh1# cat /proc/self/mountinfo | sed 's/ - .*//'
61 0 8:2 / / rw,relatime
81 61 8:3 / /X rw,relatime shared:1
124 61 8:5 / /Y rw,relatime shared:2
228 61 8:3 / /Z rw,relatime shared:1
sh2# cat /proc/self/mountinfo | sed 's/ - .*//'
147 146 8:2 / / rw,relatime
221 147 8:3 / /X rw,relatime shared:1
224 147 8:5 / /Y rw,relatime shared:2
]]

-- The article's two tables with the kernel's numbers renumbered from 1
-- (mount IDs, then the roots' parents; peer groups; devices), as
-- mountns.normalize does: the same on every run and every kernel.
local expected = [[
sh1# mount --make-private /
sh1# mount --make-shared /dev/sda3 /X
sh1# mount --make-shared /dev/sda5 /Y
sh2# unshare -m --propagation unchanged sh
sh1# mkdir /Z
sh1# mount --bind /X /Z
sh1# cat /proc/self/mountinfo | sed 's/ - .*//'
1 8 0:1 / / rw,relatime
2 1 0:2 / /X rw,relatime shared:1
3 1 0:3 / /Y rw,relatime shared:2
4 1 0:2 / /Z rw,relatime shared:1
sh2# cat /proc/self/mountinfo | sed 's/ - .*//'
5 9 0:1 / / rw,relatime
6 5 0:2 / /X rw,relatime shared:1
7 5 0:3 / /Y rw,relatime shared:2
]]

mountns.scenario("seed article, the shell session verbatim", function(ns)
  local out, sh = mountns.shell(ns, session, { normalize = true })
  io.write(out)
  local d = format.diff_text(expected, out)
  if d then error("the session printed other tables than the article's:\n" .. d, 0) end

  expect.peers({ sh.sh1, "/X" }, { sh.sh2, "/X" }, { sh.sh1, "/Z" })   -- peer group 1
  expect.peers({ sh.sh1, "/Y" }, { sh.sh2, "/Y" })                     -- peer group 2
  expect.propagation(sh.sh1, "/", "private")
  expect.propagation(sh.sh2, "/", "private")
  expect.not_mounted(sh.sh2, "/Z")     -- / is private: the bind did not propagate
end, { label = "sh1" })
