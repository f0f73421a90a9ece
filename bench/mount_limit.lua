-- bench/mount_limit.lua: how fast the kernel refuses an rbind that would
-- pass fs.mount-max (issue 16: spec 09 asserts only the behaviour, ENOSPC
-- and nothing half-applied; its speed is measured here). In one scenario:
-- a shared mount with PEERS peers and a tree of TREE mounts, so an rbind of
-- the tree under the shared mount needs PEERS * TREE new mounts, more than
-- the limit. Baseline of the same run: an rbind of a one-mount tree under
-- the same peer group (PEERS new mounts). Rounds alternate the two, so a
-- load that comes and goes weighs on both alike. Prints the medians and
-- the ratio refusal / baseline.
--   lua5.4 bench/mount_limit.lua [rounds]
local mountns = require "mountns"
local core = require "mountns.core"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local ROUNDS = tonumber(arg and arg[1]) or 5
local f = io.open("/proc/sys/fs/mount-max")
local MAX = f and tonumber(f:read("*l")) or 100000
if f then f:close() end
local PEERS = 100
local TREE = math.floor(MAX / PEERS) + 10 -- PEERS * TREE > mount-max

local refuse, base = {}, {}
local function round()
  return mountns.scenario(function(ns)
    ns:mkdir("/P"); ns:mount("p", "/P", "tmpfs"); ns:make_shared("/P")
    for i = 2, PEERS do ns:mkdir("/peer" .. i); ns:bind("/P", "/peer" .. i) end
    ns:mkdir("/T"); ns:mount("t", "/T", "tmpfs")
    ns:mkdir("/S"); ns:mount("s", "/S", "tmpfs")
    ns:run(function()
      for i = 2, TREE do
        assert(core.mkdir("/T/" .. i))
        assert(core.mount("t", "/T/" .. i, "tmpfs"))
      end
    end)
    ns:mkdir("/P/t"); ns:mkdir("/P/s")
    local out = {}
    ns:run(function()
      local t0 = core.clock()
      local ok, err = core.bind("/T", "/P/t", { recursive = true })
      out.refuse = core.clock() - t0
      assert(not ok and err:find("ENOSPC", 1, true), "expected ENOSPC, got " .. tostring(err))
      t0 = core.clock()
      assert(core.bind("/S", "/P/s", { recursive = true }))
      out.base = core.clock() - t0
    end)
    return out
  end, { timeout = 300 })
end

for _ = 1, ROUNDS do
  local r = round()
  refuse[#refuse + 1], base[#base + 1] = r.refuse, r.base
end
local mr, mb = bench.median(refuse), bench.median(base)
print(string.format("fs.mount-max %d, %d peers, a tree of %d mounts, %d rounds", MAX, PEERS,
  TREE, ROUNDS))
print(string.format("| %-58s | %10.3f ms |", "rbind refused with ENOSPC (" .. PEERS * TREE
  .. " mounts asked)", mr * 1000))
print(string.format("| %-58s | %10.3f ms |",
  "rbind of one mount into the same peer group (baseline)", mb * 1000))
print(string.format("| %-58s | %10.1f x  |", "refusal / baseline", mr / mb))
