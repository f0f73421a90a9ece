-- bench/startup.lua: the CPU of a one-scenario `mountns run` and of
-- `mountns show` with the modules precompiled (mountns.bytecode, built by
-- `make`) against the same commands loading every module from source
-- (MOUNTNS_BYTECODE=0), in the same rounds (issue 28, item 2: a
-- one-scenario run at most 0.7x, show unchanged). A command's CPU is what
-- its processes used, user + system (this process's cutime + cstime from
-- /proc/self/stat, in clock ticks, over `runs` runs: run enough of them
-- that a tick is small). Rounds alternate the commands, each round
-- starting with another one; prints each command's median CPU and wall
-- time a run, the ratios (median of the rounds' ratios) and the load.
--   lua5.4 bench/startup.lua [rounds (default 9)] [runs a round (default 40)] [TREE]
-- TREE: another source tree (built), whose bin/mountns runs the same
-- scenario and show beside this one's ("TREE run", "TREE show"): e.g. the
-- tree before the bytecode, for the ratio against it.
-- Run from the tree's top after `make`, as root (the scenario unshares).
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")
local core = require "mountns.core"

local ROUNDS = tonumber(arg and arg[1]) or 9
local RUNS = tonumber(arg and arg[2]) or 40
local OTHER = arg and arg[3]
local lua = arg and arg[-1] or "lua5.4"
local SCRIPT = "examples/private.lua" -- one scenario, a few steps
local HZ = 100 -- USER_HZ: the unit of /proc's times on Linux

local function cmd(env, tree, args)
  return "exec env " .. env .. " " .. lua .. " " .. tree .. "/bin/mountns " .. args .. " >/dev/null"
end

local CMDS = {
  { key = "run", name = "run, bytecode", cmd = cmd("", ".", "run " .. SCRIPT) },
  { key = "run0", name = "run, source (MOUNTNS_BYTECODE=0)",
    cmd = cmd("MOUNTNS_BYTECODE=0", ".", "run " .. SCRIPT) },
  { key = "show", name = "show, bytecode", cmd = cmd("", ".", "show") },
  { key = "show0", name = "show, source (MOUNTNS_BYTECODE=0)",
    cmd = cmd("MOUNTNS_BYTECODE=0", ".", "show") },
}
if OTHER then
  CMDS[#CMDS + 1] = { key = "runT", name = "TREE run", cmd = cmd("", OTHER, "run " .. SCRIPT) }
  CMDS[#CMDS + 1] = { key = "showT", name = "TREE show", cmd = cmd("", OTHER, "show") }
end

-- CPU seconds used so far by this process's waited-for children
local function children_cpu()
  local f = assert(io.open("/proc/self/stat"))
  local stat = f:read("*a")
  f:close()
  -- the fields after the command's ")": state is field 3, cutime 16, cstime 17
  local fields = {}
  for w in stat:match("%) (.*)$"):gmatch("%S+") do fields[#fields + 1] = w end
  return (tonumber(fields[14]) + tonumber(fields[15])) / HZ
end

local wall = {}
local list = {}
for i, c in ipairs(CMDS) do
  assert(os.execute(c.cmd), c.cmd) -- it works, and warms the caches
  wall[c.key] = {}
  list[i] = { key = c.key, run = function()
    local cpu0, t0 = children_cpu(), core.clock()
    for _ = 1, RUNS do os.execute(c.cmd) end
    local w = wall[c.key]
    w[#w + 1] = (core.clock() - t0) / RUNS
    return (children_cpu() - cpu0) / RUNS
  end }
end

local load0 = bench.loadavg()
local times = bench.rounds(ROUNDS, list, true)
local load1 = bench.loadavg()

local function ms(s) return string.format("%6.2f ms", s * 1e3) end
print(string.format("%s, %d rounds of %d runs each, load %s -> %s", lua, ROUNDS, RUNS,
  load0, load1))
for _, c in ipairs(CMDS) do
  print(string.format("  %-36s CPU %s  wall %s", c.name, ms(bench.median(times[c.key])),
    ms(bench.median(wall[c.key]))))
end
local function ratio(a, b, what)
  local r = {}
  for i = 1, ROUNDS do r[i] = times[a][i] / times[b][i] end
  table.sort(r)
  print(string.format("  %-36s %.2fx CPU (rounds %.2f-%.2f)", what, bench.median(r), r[1], r[#r]))
end
ratio("run", "run0", "run: bytecode / source")
ratio("show", "show0", "show: bytecode / source")
if OTHER then
  ratio("run", "runT", "run: bytecode / TREE")
  ratio("show", "showT", "show: bytecode / TREE")
end
