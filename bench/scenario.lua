-- Benchmark (issue 3): the seed article's scenario run 20 times in one Lua
-- process with mountns, against the same steps as a shell script with
-- unshare, mount, nsenter and findmnt (bench/article.sh) run 20 times.
-- Prints medians of several rounds and the ratio; both are measured in
-- this same run. Everything runs inside private mount namespaces.
local mountns = require "mountns"
local core = require "mountns.core"
local expect = require "mountns.expect"

local RUNS, ROUNDS = 20, 5
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench"

local function article(sh1)
  sh1:mkdir("/X"); sh1:mkdir("/Y"); sh1:mkdir("/Z")
  sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
  local sh2 = sh1:unshare { propagation = "unchanged" }
  sh1:bind("/X", "/Z")
  expect.propagation(sh1, "/X", "shared")
  expect.peers({ sh1, "/X" }, { sh1, "/Z" }, { sh2, "/X" })
  expect.not_mounted(sh2, "/Z")
end

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local function time_it(fn)
  local rounds = {}
  for r = 1, ROUNDS do
    local t0 = core.clock()
    for _ = 1, RUNS do fn() end
    rounds[r] = core.clock() - t0
  end
  return median(rounds)
end

local lua_s = time_it(function() mountns.scenario(article) end)
local sh_s = time_it(function()
  assert(os.execute("sh " .. dir .. "/article.sh"), "bench/article.sh failed")
end)

print(string.format("article scenario x%d (median of %d rounds)", RUNS, ROUNDS))
print(string.format("  mountns (one Lua process)      %8.1f ms  (%.2f ms each)",
  lua_s * 1000, lua_s * 1000 / RUNS))
print(string.format("  shell: unshare/mount/nsenter/findmnt %8.1f ms  (%.2f ms each)",
  sh_s * 1000, sh_s * 1000 / RUNS))
print(string.format("  ratio shell / mountns           %8.1fx  (target >= 10x)", sh_s / lua_s))
