-- bench/show.lua: `bin/mountns show` against `findmnt` on this namespace's
-- mount table (issue 15: show as fast as findmnt; at 20 mounts its cost is
-- mostly start-up: the interpreter, the modules it loads, core.so).
-- Rounds alternate the two commands, each started through the same
-- `sh -c exec ...`, so the shell's cost and a passing load weigh on both;
-- prints each one's median wall time and the ratio.
--   lua5.4 bench/show.lua [rounds (default 15)] [runs a round (default 10)]
local core = require "mountns.core"

local ROUNDS = tonumber(arg and arg[1]) or 15
local RUNS = tonumber(arg and arg[2]) or 10
local lua = arg and arg[-1] or "lua5.4"
local mounts = 0
for _ in io.lines("/proc/self/mountinfo") do mounts = mounts + 1 end

local CMDS = {
  { name = "bin/mountns show", cmd = "exec " .. lua .. " bin/mountns show >/dev/null" },
  { name = "findmnt", cmd = "exec findmnt >/dev/null" },
  { name = "bin/mountns show --json",
    cmd = "exec " .. lua .. " bin/mountns show --json >/dev/null" },
  { name = "findmnt -J", cmd = "exec findmnt -J >/dev/null" },
  { name = "lua -e '' (the interpreter alone)", cmd = "exec " .. lua .. " -e '' >/dev/null" },
}

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

for _, c in ipairs(CMDS) do
  c.times = {}
  assert(os.execute(c.cmd)) -- warm, and it works
end
for r = 1, ROUNDS do
  for k = 1, #CMDS do
    local c = CMDS[(r + k) % #CMDS + 1] -- each round starts elsewhere
    local t0 = core.clock()
    for _ = 1, RUNS do os.execute(c.cmd) end
    c.times[#c.times + 1] = (core.clock() - t0) / RUNS
  end
end
local f = io.open("/proc/loadavg")
local load = f and f:read("*l") or "?"
if f then f:close() end
print(string.format("show start-up: %d mounts, %d rounds x %d runs, loadavg %s",
  mounts, ROUNDS, RUNS, load))
for _, c in ipairs(CMDS) do
  c.median = median(c.times)
  print(string.format("  %-36s %7.2f ms", c.name, c.median * 1000))
end
print(string.format("  show / findmnt:           %.2fx (target <= 1.0)",
  CMDS[1].median / CMDS[2].median))
print(string.format("  show --json / findmnt -J: %.2fx (target <= 1.0)",
  CMDS[3].median / CMDS[4].median))
