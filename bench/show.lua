-- bench/show.lua: `bin/mountns show` against `findmnt`, and `show --json`
-- against `findmnt -J` (issue 15: as fast as findmnt at 20, 1,000 and
-- 10,000 mounts). The 20-mount table is this namespace's own (at that size
-- the cost is mostly start-up: the interpreter, what it loads, core.so);
-- the larger ones are made inside an isolated child namespace
-- (mountns.isolate: half tmpfs mounts, half binds, under a tmpfs on /tmp),
-- and the commands run there. Rounds alternate the commands, each round
-- starting with another one, each started through the same `sh -c exec
-- ...`, so the shell's cost and a passing load weigh on all alike; prints
-- each one's median wall time and the ratios.
--   lua5.4 bench/show.lua [rounds (default 15)] [runs a round (default 10)] [TREE]
-- TREE: another source tree (built), whose bin/mountns is timed beside
-- this one's in the same rounds ("TREE show"), for before/after ratios.
-- (at 1,000 mounts a fifth of the runs, at 10,000 one run and 5 rounds:
-- findmnt's tree grows quadratically)
local mountns = require "mountns"
local core = require "mountns.core"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local ROUNDS = tonumber(arg and arg[1]) or 15
local RUNS = tonumber(arg and arg[2]) or 10
local lua = arg and arg[-1] or "lua5.4"
local ROOT = "."
local OTHER = arg and arg[3]

local CMDS = {
  { name = "bin/mountns show", cmd = "exec " .. lua .. " " .. ROOT .. "/bin/mountns show" },
  { name = "findmnt", cmd = "exec findmnt" },
  { name = "bin/mountns show --json",
    cmd = "exec " .. lua .. " " .. ROOT .. "/bin/mountns show --json" },
  { name = "findmnt -J", cmd = "exec findmnt -J" },
  { name = "lua -e '' (the interpreter alone)", cmd = "exec " .. lua .. " -e ''" },
}
if OTHER then
  table.insert(CMDS, { name = "TREE show",
                       cmd = "exec " .. lua .. " " .. OTHER .. "/bin/mountns show" })
  table.insert(CMDS, { name = "TREE show --json",
                       cmd = "exec " .. lua .. " " .. OTHER .. "/bin/mountns show --json" })
end

-- the medians (seconds) of every command, in this process's namespace
local function measure(rounds, runs)
  for _, c in ipairs(CMDS) do
    assert(os.execute(c.cmd .. " >/dev/null")) -- warm, and it works
  end
  local list = {}
  for k, c in ipairs(CMDS) do
    list[k] = { key = k, run = function()
      return (bench.timed(runs, os.execute, c.cmd .. " >/dev/null"))
    end }
  end
  local times = bench.rounds(rounds, list, true) -- each round starts elsewhere
  local out = { mounts = #assert(core.read_mountinfo()):gsub("[^\n]", "") }
  for k in ipairs(CMDS) do out[k] = bench.median(times[k]) end
  return out
end

local results = { measure(ROUNDS, RUNS) }
for _, n in ipairs { 1000, 10000 } do
  results[#results + 1] = mountns.isolate_with({ timeout = 1800 }, function()
    bench.populate(n - results[1].mounts - 1) -- and the tmpfs on /tmp
    if n >= 10000 then return measure(5, 1) end
    return measure(ROUNDS, math.max(1, math.floor(RUNS / 5)))
  end)
end

local f = io.open("/proc/loadavg")
local load = f and f:read("*l") or "?"
if f then f:close() end
print(string.format("show: %d rounds x %d runs (1,000 mounts: %d runs; 10,000: 5 x 1), "
  .. "loadavg %s", ROUNDS, RUNS, math.max(1, math.floor(RUNS / 5)), load))
local head = string.format("| %-36s |", "median wall time (ms)")
for _, r in ipairs(results) do head = head .. string.format(" %8d mounts |", r.mounts) end
print(head)
print("|" .. string.rep("-", 38) .. string.rep("|-----------------", #results) .. "|")
for k, c in ipairs(CMDS) do
  local row = string.format("| %-36s |", c.name)
  for _, r in ipairs(results) do row = row .. string.format(" %15.2f |", r[k] * 1000) end
  print(row)
end
local ratios = { { "show / findmnt (target <= 1.0)", 1, 2 },
                 { "show --json / findmnt -J (target <= 1.0)", 3, 4 } }
if OTHER then
  ratios[3] = { "TREE show / findmnt", 6, 2 }
  ratios[4] = { "TREE show --json / findmnt -J", 7, 4 }
end
if OTHER then print("TREE: " .. OTHER) end
for _, q in ipairs(ratios) do
  local row = string.format("| %-36s |", q[1])
  for _, r in ipairs(results) do row = row .. string.format(" %14.2fx |", r[q[2]] / r[q[3]]) end
  print(row)
end
