-- sharedsubtree.rst, section 6 "Quiz", B: an rbind of a shared / into a
-- directory of itself. What is in /v/1/v/1?
--     mount --make-rshared /
--     mkdir -p /v/1
--     mount --rbind / /v/1
-- The kernel's answer: an empty directory. The rbind copies the tree as it
-- was before the new mount, and propagation to /'s peer group (only /
-- itself) adds nothing: one new mount, no recursion.
local mountns = require "mountns"
local expect = require "mountns.expect"

mountns.scenario("quiz B: rbind of a shared / into itself", function(ns)
  ns:make_shared("/", { recursive = true })
  ns:mkdir("/v/1")
  ns:bind("/", "/v/1", { recursive = true })

  expect.count(ns, "/", 2)                     -- / and /v/1, nothing more
  expect.mounted(ns, "/v/1", { root = "/", parent = "/" })
  expect.peers({ ns, "/" }, { ns, "/v/1" })
  expect.not_mounted(ns, "/v/1/v/1")

  -- /v/1 shows /, whose /v/1 is the plain directory: empty
  assert(table.concat(ns:ls("/v/1/v"), " ") == "1")
  assert(#ns:ls("/v/1/v/1") == 0)
  assert(not ns:exists("/v/1/v/1/v"))
end)
